defmodule Emqlite.Testing do
  @moduledoc """
  Test support for applications that use emqlite: an in-memory database on
  a fake clock, so tests check leases, retries, backoff and schedules
  without sleeping.

      defmodule MyApp.MailerTest do
        use ExUnit.Case, async: true
        use Emqlite.Testing                 # gives every test %{db: db, clock: clock}

        test "a lapsed lease is reaped", %{db: db, clock: clock} do
          {:ok, id} = Emqlite.mint(db)
          {:ok, :enqueued} = Emqlite.enqueue(db, "mail", id, "hi")
          {:ok, {^id, "hi", 1}} = Emqlite.claim(db, "mail", 30_000)
          advance(clock, 30_001)
          assert {:ok, 1} = Emqlite.reap(db, "mail")
        end
      end

  The clock is shared memory that the library reads once per transition:
  `advance/2` and `set/2` move it from any process, and every handle opened
  on it (`Emqlite.open(path, clock: clock)`) sees the move at once.
  `perform_all/4` runs a worker module's `perform/1` over a queue the way
  `Emqlite.Worker` does, in the test's own process.
  """

  defmodule Clock do
    @moduledoc "A fake clock (Unix ms) that moves only when a test moves it."
    @enforce_keys [:ref]
    defstruct [:ref]
    @type t :: %__MODULE__{ref: reference()}
  end

  @typedoc "A fake clock."
  @type clock :: Clock.t()

  @default_start 1_767_225_600_000

  @doc "A fake clock at `start_ms` (default 2026-01-01T00:00:00Z)."
  @spec clock(integer()) :: clock()
  def clock(start_ms \\ @default_start), do: %Clock{ref: Emqlite.Native.nif_clock_new(start_ms)}

  @doc "Move the clock forward by `ms`; returns the new time."
  @spec advance(clock(), integer()) :: integer()
  def advance(%Clock{ref: r}, ms), do: Emqlite.Native.nif_clock_move(r, ms, 0)

  @doc "Set the clock to Unix ms `ms`."
  @spec set(clock(), integer()) :: integer()
  def set(%Clock{ref: r}, ms), do: Emqlite.Native.nif_clock_move(r, ms, 1)

  @doc "The clock's time (Unix ms)."
  @spec now(clock()) :: integer()
  def now(%Clock{ref: r}), do: Emqlite.Native.nif_clock_now(r)

  @doc """
  An in-memory database on a new fake clock: `%{db: db, clock: clock}`.
  Options go to `Emqlite.open/2` (`:clock` to share one clock).
  """
  @spec open(keyword()) :: %{db: Emqlite.db(), clock: clock()}
  def open(opts \\ []) do
    clock = Keyword.get_lazy(opts, :clock, &clock/0)
    {:ok, db} = Emqlite.open(":memory:", Keyword.put(opts, :clock, clock))
    %{db: db, clock: clock}
  end

  @doc """
  An ExUnit setup callback: opens an in-memory database on a fake clock
  and closes it after the test. `use Emqlite.Testing` installs it and
  imports `advance/2`, `set/2`, `now/1` and `perform_all/4`.
  """
  @spec emqlite_db(map()) :: %{db: Emqlite.db(), clock: clock()}
  def emqlite_db(_context) do
    ctx = open()
    ExUnit.Callbacks.on_exit(fn -> Emqlite.close(ctx.db) end)
    ctx
  end

  @doc false
  defmacro __using__(_opts) do
    quote do
      import Emqlite.Testing, only: [advance: 2, set: 2, now: 1, perform_all: 3, perform_all: 4]
      setup context do
        Emqlite.Testing.emqlite_db(context)
      end
    end
  end

  @doc """
  Claim every job of `queue` that is pending now and run `module.perform/1`
  on it in this process, settling each as `Emqlite.Worker` does (complete,
  retry under the queue's policy, or abandon). Retried jobs are not run
  again until the clock reaches their run-at and a later call promotes
  them. Returns what happened: `%{completed: n, retried: n, dead: n,
  abandoned: n}`. Options: `:lease` (ms, 30000), `:retry` (the fallback
  policy `{max_attempts, backoff}`).
  """
  @spec perform_all(Emqlite.db(), Emqlite.queue(), module(), keyword()) :: %{atom() => non_neg_integer()}
  def perform_all(db, queue, module, opts \\ []) do
    {:ok, _} = Emqlite.promote(db, queue, 1000)
    loop(db, queue, module, opts, %{completed: 0, retried: 0, dead: 0, abandoned: 0, stale: 0})
  end

  defp loop(db, queue, module, opts, acc) do
    case Emqlite.claim(db, queue, Keyword.get(opts, :lease, 30_000)) do
      :empty ->
        acc

      {:ok, job} ->
        outcome = Emqlite.Worker.run_perform(module, job)
        key = Emqlite.Worker.settle(db, queue, job, outcome, Keyword.get(opts, :retry))
        loop(db, queue, module, opts, Map.update(acc, key, 1, &(&1 + 1)))
    end
  end
end
