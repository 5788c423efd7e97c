defmodule Emqlite.Worker do
  @moduledoc """
  A supervised worker: a module with a `perform/1` callback, run over one
  queue by `:concurrency` processes.

      defmodule MyApp.Mailer do
        use Emqlite.Worker

        @impl true
        def perform({_id, payload, _attempts}) do
          case MyApp.SMTP.send(payload) do
            :ok -> :ok                       # complete the job
            {:error, why} -> {:error, why}   # retry under the queue's policy
          end
        end
      end

      children = [
        {MyApp.Mailer, path: "jobs.db", queue: "mail", concurrency: 4}
      ]

  Each runner process opens its own handle on `:path` (or shares `:db`,
  e.g. an in-memory database in tests) and loops: a waiting claim (in
  short slices on a dirty I/O scheduler, so a runner is always responsive
  to its supervisor), `perform/1` in a monitored process of its own while
  the runner extends the lease every half lease, then the settlement:

    * `:ok` or `{:ok, result}` completes the job (`result`, a binary, is
      recorded for a flow parent);
    * `{:error, reason}`, a raise, a throw or an exit retries it under the
      stored policy (`Emqlite.set_policy/5`: the job's, else the queue's),
      else under `:retry` (`{max_attempts, backoff}`), else the protocol's
      default (3 attempts, "fixed:1000"); at the cap the job is dead;
    * `:abandon` lets the lease lapse (a reap returns the job to pending).

  Graceful shutdown: when its supervisor stops a runner, the runner stops
  claiming, lets the job in hand finish for up to `:shutdown` ms and
  settles it; a job still running then is killed and left to its lease.
  One runner (the first) also runs the pump, `Emqlite.sweep/3`, every
  `:pump` ms (1000; `nil` for none): due repeats fire and cross-queue flow
  completions are delivered.

  Options: `:module` (given by `use`), `:queue` (required), `:path` or
  `:db` (one required), `:concurrency` (1), `:lease` (30000 ms), `:retry`,
  `:slice` (250 ms, the longest single wait), `:shutdown` (30000 ms),
  `:pump` (1000 ms), `:open` (options for `Emqlite.open/2`), `:notify` (a
  pid that receives `{:emqlite_worker, outcome, {id, payload, attempts}}`
  after each job, outcome one of `:completed`, `:retried`, `:dead`,
  `:abandoned`, `:stale`), `:name`.
  """

  use Supervisor

  @typedoc "What `perform/1` answers."
  @type result :: :ok | {:ok, binary() | term()} | {:error, term()} | :abandon

  @doc "Run one job: `{id, payload, attempts}`."
  @callback perform(Emqlite.job()) :: result()

  @doc false
  defmacro __using__(_opts) do
    quote do
      @behaviour Emqlite.Worker

      @doc "A child spec running this module's `perform/1` (see `Emqlite.Worker`)."
      def child_spec(opts), do: Emqlite.Worker.child_spec(Keyword.put(opts, :module, __MODULE__))

      @doc "Start the workers of this module (see `Emqlite.Worker`)."
      def start_link(opts), do: Emqlite.Worker.start_link(Keyword.put(opts, :module, __MODULE__))

      defoverridable child_spec: 1, start_link: 1
    end
  end

  @doc "Start a worker supervisor (options: see the module doc)."
  @spec start_link(keyword()) :: Supervisor.on_start()
  def start_link(opts) do
    for k <- [:module, :queue] do
      Keyword.has_key?(opts, k) || raise ArgumentError, "Emqlite.Worker: option #{inspect(k)} is required"
    end

    Keyword.has_key?(opts, :path) or Keyword.has_key?(opts, :db) or
      raise ArgumentError, "Emqlite.Worker: give :path (a file) or :db (a handle)"

    case Keyword.get(opts, :name) do
      nil -> Supervisor.start_link(__MODULE__, opts)
      name -> Supervisor.start_link(__MODULE__, opts, name: name)
    end
  end

  @doc false
  def child_spec(opts) do
    %{
      id: Keyword.get(opts, :id, {__MODULE__, opts[:module], opts[:queue]}),
      start: {__MODULE__, :start_link, [opts]},
      type: :supervisor
    }
  end

  @impl true
  def init(opts) do
    n = Keyword.get(opts, :concurrency, 1)
    shutdown = Keyword.get(opts, :shutdown, 30_000)

    children =
      for i <- 1..n do
        Supervisor.child_spec({Emqlite.Worker.Runner, Keyword.put(opts, :index, i)},
          id: {:runner, i},
          shutdown: shutdown + 5_000
        )
      end

    Supervisor.init(children, strategy: :one_for_one)
  end

  @doc false
  # perform/1 under a net: every outcome becomes a result, nothing escapes.
  @spec run_perform(module(), Emqlite.job()) :: {:ok, binary() | nil} | {:error, binary()} | :abandon
  def run_perform(module, job) do
    try do
      case module.perform(job) do
        :ok -> {:ok, nil}
        {:ok, r} when is_binary(r) -> {:ok, r}
        {:ok, _} -> {:ok, nil}
        :abandon -> :abandon
        {:error, r} when is_binary(r) -> {:error, r}
        {:error, r} -> {:error, inspect(r)}
        other -> {:error, "perform/1 returned " <> inspect(other)}
      end
    rescue
      e -> {:error, Exception.message(e)}
    catch
      kind, r -> {:error, "#{kind}: #{inspect(r)}"}
    end
  end

  @doc false
  # Settle one job; the outcome's name.
  @spec settle(Emqlite.db(), Emqlite.queue(), Emqlite.job(), term(), {pos_integer(), String.t()} | nil) ::
          :completed | :retried | :dead | :abandoned | :stale
  def settle(db, q, {id, _payload, attempts}, outcome, fallback) do
    case outcome do
      {:ok, result} ->
        case Emqlite.complete(db, q, id, attempts, result) do
          :ok -> :completed
          {:error, _} -> :stale
        end

      {:error, why} ->
        case Emqlite.retry_by_policy(db, q, id, attempts, why, fallback) do
          {:ok, :scheduled} -> :retried
          {:ok, :dead} -> :dead
          {:error, _} -> :stale
        end

      :abandon ->
        :abandoned
    end
  end
end

defmodule Emqlite.Worker.Runner do
  @moduledoc false
  # One worker process: claim, perform in a monitored process, extend,
  # settle; graceful on shutdown (see Emqlite.Worker).
  use GenServer
  require Logger

  def start_link(opts), do: GenServer.start_link(__MODULE__, opts)

  @impl true
  def init(opts) do
    Process.flag(:trap_exit, true)

    {db, own} =
      case Keyword.fetch(opts, :db) do
        {:ok, db} ->
          {db, false}

        :error ->
          case Emqlite.open(Keyword.fetch!(opts, :path), Keyword.get(opts, :open, [])) do
            {:ok, db} -> {db, true}
            {:error, why} -> throw({:stop, {:emqlite_open, why}})
          end
      end

    lease = Keyword.get(opts, :lease, 30_000)

    st = %{
      db: db,
      own: own,
      module: Keyword.fetch!(opts, :module),
      queue: Keyword.fetch!(opts, :queue),
      lease: lease,
      extend_every: max(div(lease, 2), 1),
      retry: Keyword.get(opts, :retry),
      slice: Keyword.get(opts, :slice, 250),
      shutdown: Keyword.get(opts, :shutdown, 30_000),
      notify: Keyword.get(opts, :notify),
      pump: if(Keyword.get(opts, :index) == 1, do: Keyword.get(opts, :pump, 1000)),
      job: nil,
      task: nil,
      timer: nil
    }

    send(self(), :poll)
    if st.pump, do: Process.send_after(self(), :pump, st.pump)
    {:ok, st}
  catch
    {:stop, why} -> {:stop, why}
  end

  @impl true
  def handle_info(:poll, %{job: nil} = st) do
    case Emqlite.claim_wait(st.db, st.queue, st.lease, st.slice, slice: st.slice) do
      {:ok, job} ->
        {pid, ref} = spawn_monitor(fn -> exit({:emqlite_result, Emqlite.Worker.run_perform(st.module, job)}) end)
        timer = Process.send_after(self(), :extend, st.extend_every)
        {:noreply, %{st | job: job, task: {pid, ref}, timer: timer}}

      :empty ->
        send(self(), :poll)
        {:noreply, st}

      {:error, why} ->
        Logger.warning("emqlite worker #{st.queue}: claim failed: #{inspect(why)}")
        Process.send_after(self(), :poll, st.slice)
        {:noreply, st}
    end
  end

  def handle_info(:poll, st), do: {:noreply, st}

  def handle_info(:extend, %{job: {id, _, att}} = st) do
    _ = Emqlite.extend_lock(st.db, st.queue, id, att, st.lease)
    {:noreply, %{st | timer: Process.send_after(self(), :extend, st.extend_every)}}
  end

  def handle_info(:extend, st), do: {:noreply, st}

  def handle_info(:pump, st) do
    _ = Emqlite.sweep(st.db, st.queue)
    Process.send_after(self(), :pump, st.pump)
    {:noreply, st}
  end

  def handle_info({:DOWN, ref, :process, _pid, reason}, %{task: {_, ref}} = st) do
    st = finish(st, outcome(reason))
    send(self(), :poll)
    {:noreply, st}
  end

  def handle_info(_other, st), do: {:noreply, st}

  @impl true
  def terminate(_reason, st) do
    st =
      case st.task do
        nil ->
          st

        {pid, ref} ->
          receive do
            {:DOWN, ^ref, :process, _, reason} -> finish(st, outcome(reason))
          after
            st.shutdown ->
              Process.demonitor(ref, [:flush])
              Process.exit(pid, :kill)
              finish(st, :abandon)
          end
      end

    if st.own, do: Emqlite.close(st.db)
    :ok
  end

  defp outcome({:emqlite_result, r}), do: r
  defp outcome(reason), do: {:error, "perform/1 process exited: " <> inspect(reason)}

  defp finish(st, outcome) do
    if st.timer, do: Process.cancel_timer(st.timer)
    key = Emqlite.Worker.settle(st.db, st.queue, st.job, outcome, st.retry)
    if st.notify, do: send(st.notify, {:emqlite_worker, key, st.job})
    %{st | job: nil, task: nil, timer: nil}
  end
end
