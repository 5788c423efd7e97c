defmodule Emqlite do
  @moduledoc """
  emqlite for Elixir: the EchoMQ job-queue protocol (wire `echomq:4.0.0`) as
  an embedded engine over one SQLite file, through a NIF over libemqlite.

      {:ok, db} = Emqlite.open("jobs.db")
      {:ok, id} = Emqlite.mint(db)
      {:ok, :enqueued} = Emqlite.enqueue(db, "mail", id, "hello")
      {:ok, {^id, "hello", attempts}} = Emqlite.claim(db, "mail", 30_000)
      :ok = Emqlite.complete(db, "mail", id, attempts)

  Every verb is one atomic transition inside one SQLite transaction, with
  the keys, fields, replies and error strings of the EchoMQ Valkey wire: an
  export of the file replays into Valkey and the reference runtime carries
  on from it. Functions are named after the protocol's verbs (PROTOCOL.md
  §6) and answer the reference's result names (Appendix A.4):

    * a transition that succeeds answers `:ok`, or `{:ok, verdict}` when the
      protocol names several successes (`{:ok, :enqueued}`,
      `{:ok, :duplicate}`, `{:ok, :scheduled}`, `{:ok, :dead}`), or
      `{:ok, value}` for a count or a read;
    * a read or claim that finds nothing answers `:empty` or `:absent`;
    * an outcome where the asked-for change did not happen is
      `{:error, reason}`: a wire class whose text never varies is its bare
      name (`:kind`, `:gone`, `:locked`, `:not_paused`, `:active`,
      `:not_dead`, `:rate`, `:nonmonotonic`, `:not_found`, `:not_pending`);
      a class whose text varies carries it: `{:stale, "EMQSTALE complete
      token mismatch"}`, `{:refused, "unknown_state(wait)"}`,
      `{:engine, "BUSYGROUP ..."}`, and every host-side failure, e.g.
      `{:invalid_queue, msg}`, `{:invalid_id, msg}`,
      `{:invalid_argument, msg}`, `{:busy, msg}`, `{:io, msg}`,
      `{:closed, msg}`. Protocol outcomes never raise; a wrong Elixir type
      (a payload that is not iodata) raises `ArgumentError`.

  Units: every duration and instant is integer milliseconds (Unix ms for
  instants), as the protocol's verbs take them. Payloads are binaries (any
  iodata is accepted) and come back as binaries; large ones are not copied
  out of the library (the binary is backed by the library's buffer).

  Every verb of the library's registry, including the protocol's low-level
  steps this module does not wrap one by one, is reachable by its wire name
  through `call/3` (`verbs/0` lists them), which answers the wire reply.

  Handles. A handle is a NIF resource: `close/1` closes it, and so does the
  garbage collector once no process refers to it. Calls on one handle are
  serialised (any process may use it); each call that touches the file runs
  on a dirty I/O scheduler, so no normal scheduler waits on SQLite. Any
  number of handles, in one VM or many OS processes, may share a file.
  """

  alias Emqlite.Native

  @typedoc "An open handle (a NIF resource)."
  @type db :: reference()
  @typedoc "A queue name: `[A-Za-z0-9._-]{1,128}`, not \"emq\"."
  @type queue :: String.t()
  @typedoc "A branded id: 14 bytes, e.g. \"JOB0KHTOWnGLuC\"."
  @type id :: String.t()
  @typedoc "A lane's group: a branded id (\"PRT...\" by convention)."
  @type group :: String.t()
  @typedoc "A claim's fencing token: the job's attempts."
  @type token :: non_neg_integer()
  @typedoc "A claimed job, as the reference answers it."
  @type job :: {id(), binary() | nil, token()}
  @typedoc "A failure: a bare wire class, or a class with its exact text."
  @type reason ::
          :kind
          | :gone
          | :locked
          | :not_paused
          | :active
          | :not_dead
          | :rate
          | :nonmonotonic
          | :not_found
          | :not_pending
          | {:stale, String.t()}
          | {atom(), String.t()}
  @type error :: {:error, reason()}
  @typedoc "Milliseconds."
  @type ms :: integer()

  # -------------------------------------------------------------- library

  @doc "The C library's version, the SQLite it runs on and the wire it speaks."
  @spec version() :: %{library: String.t(), sqlite: String.t(), wire: String.t()}
  def version do
    {lib, sqlite, wire} = Native.nif_version()
    %{library: lib, sqlite: sqlite, wire: wire}
  end

  @doc """
  Every verb of the library's registry, in registry order: name, protocol
  tier (0 for reads beyond the wire), kind (`:write`, `:read`,
  `:procedure`, `:host`), its arguments as `{name, optional?, repeated?}`
  and a one-line summary.
  """
  @spec verbs() :: [
          %{name: String.t(), tier: 0..5, kind: atom(), args: [{String.t(), boolean(), boolean()}], summary: String.t()}
        ]
  def verbs do
    for {name, tier, kind, args, summary} <- Native.nif_verbs() do
      %{name: name, tier: tier, kind: kind, args: args, summary: summary}
    end
  end

  # -------------------------------------------------------------- handles

  @typedoc "Options of `open/2`."
  @type open_option ::
          {:clock, Emqlite.Testing.clock()}
          | {:sync, :normal | :full}
          | {:busy_timeout, ms()}
          | {:node_id, 0..1023}
          | {:readonly, boolean()}
          | {:exclusive, boolean()}
          | {:max_payload, pos_integer()}
          | {:checkpoint_frames, non_neg_integer()}

  @doc """
  Open (creating if absent) the emqlite file at `path` (`":memory:"` for a
  private in-memory database) and pass the version fence.

  Options: `:clock` (a fake clock of `Emqlite.Testing`), `:sync` (`:normal`,
  the default, or `:full`), `:busy_timeout` (ms to wait for the write lock,
  5000), `:node_id` (by default leased from the file), `:readonly`,
  `:exclusive`, `:max_payload` (bytes), `:checkpoint_frames`.

  Returns `{:ok, db}` or `{:error, reason}`, e.g.
  `{:error, {:version_fence, msg}}` for a file of another wire,
  `{:error, {:not_emqlite, msg}}`, `{:error, {:cantopen, msg}}`.
  """
  @spec open(Path.t(), [open_option()]) :: {:ok, db()} | error()
  def open(path \\ ":memory:", opts \\ []) do
    sync =
      case Keyword.get(opts, :sync, :normal) do
        :normal -> 1
        :full -> 2
      end

    o = {
      sync,
      Keyword.get(opts, :busy_timeout, 5000),
      Keyword.get(opts, :node_id, -1),
      if(Keyword.get(opts, :readonly, false), do: 1, else: 0),
      if(Keyword.get(opts, :exclusive, false), do: 1, else: 0),
      Keyword.get(opts, :max_payload, 0),
      Keyword.get(opts, :checkpoint_frames, -1)
    }

    clock =
      case Keyword.get(opts, :clock) do
        nil -> nil
        %Emqlite.Testing.Clock{ref: ref} -> ref
      end

    case Native.nif_open(IO.iodata_to_binary(path), clock, o) do
      {:ok, db} -> {:ok, db}
      {:error, code, msg} -> {:error, reason(code, msg)}
    end
  end

  @doc "Close the handle (idempotent); later calls answer `{:error, {:closed, msg}}`."
  @spec close(db()) :: :ok
  def close(db) do
    Native.nif_interrupt(db)
    Native.nif_close(db)
  end

  @doc "Mint a fresh branded id in namespace `ns` (\"JOB\" for jobs)."
  @spec mint(db(), String.t()) :: {:ok, id()} | error()
  def mint(db, ns \\ "JOB"), do: raw(Native.nif_mint(db, ns))

  @doc "The handle's clock (Unix ms)."
  @spec now(db()) :: {:ok, ms()} | error()
  def now(db), do: raw(Native.nif_info(db, "now"))

  @doc "The node id (0..1023) this handle mints with."
  @spec node_id(db()) :: {:ok, 0..1023} | error()
  def node_id(db), do: raw(Native.nif_info(db, "node_id"))

  @doc "Run a WAL checkpoint (RESTART mode)."
  @spec checkpoint(db()) :: :ok | error()
  def checkpoint(db), do: raw(Native.nif_info(db, "checkpoint"))

  @doc "The queues that have keys in the file, in byte order."
  @spec queues(db()) :: {:ok, [queue()]} | error()
  def queues(db), do: raw(Native.nif_info(db, "queues"))

  @doc """
  Check the file's invariants: `{:ok, findings}`, each finding
  `{:violation | :note, code, key, message}` (`[]` for a clean file).
  """
  @spec check(db()) :: {:ok, [{:violation | :note, String.t(), String.t(), String.t()}]} | error()
  def check(db), do: raw(Native.nif_check(db))

  @doc """
  What happened to job `id`, oldest first (doc/HISTORY.md): `{:ok,
  entries}`, each a map with `:seq`, `:at` (ms), `:kind` ("enqueued",
  "claimed", "retried", "dead", ...), `:queue`, `:job` and, `nil` where
  the kind carries none, `:attempts`, `:delay` (ms), `:run_at` (ms),
  `:error` (binary), `:host`, `:pid`, `:worker`. Option `:queue`: only
  that queue's.
  """
  @spec history(db(), String.t(), keyword()) :: {:ok, [map()]} | error()
  def history(db, id, opts \\ []),
    do: raw(Native.nif_history(db, Keyword.get(opts, :queue), id))

  @history_levels %{off: 0, on: 1, failures: 2}

  @doc """
  What the file's job history records: `:on` (every transition, the
  default), `:failures` (retries, deaths, lost leases, removals and
  requeues; dead jobs kept, completed ones not) or `:off`.
  """
  @spec history_level(db()) :: {:ok, :on | :failures | :off} | error()
  def history_level(db) do
    with {:ok, v} <- raw(Native.nif_history_level(db, -1)) do
      {:ok, Enum.find_value(@history_levels, :on, fn {k, x} -> x == v && k end)}
    end
  end

  @doc "Set what the file's job history records (see `history_level/1`)."
  @spec set_history_level(db(), :on | :failures | :off) :: :ok | error()
  def set_history_level(db, level) do
    case Map.fetch(@history_levels, level) do
      {:ok, v} ->
        with {:ok, _} <- raw(Native.nif_history_level(db, v)), do: :ok

      :error ->
        {:error, {:invalid_argument, "history level must be :on, :failures or :off, not #{inspect(level)}"}}
    end
  end

  @doc """
  The file's keyspace as the RESP command stream that `redis-cli --pipe`
  replays into Valkey (PROTOCOL.md §8). Options: `:queues` (only these
  queues' keys), `:by_slot` (order by cluster slot, MULTI/EXEC per slot).
  """
  @spec export(db(), queues: [queue()], by_slot: boolean()) :: {:ok, binary()} | error()
  def export(db, opts \\ []) do
    raw(Native.nif_export(db, Keyword.get(opts, :queues), if(opts[:by_slot], do: 1, else: 0), 0))
  end

  @doc "The logical digest of the keyspace (filtered like `export/2`): keys, digest."
  @spec digest(db(), queues: [queue()]) :: {:ok, map()} | error()
  def digest(db, opts \\ []), do: raw(Native.nif_export(db, Keyword.get(opts, :queues), 0, 1))

  @doc "Apply a RESP command stream (an export) in one checked transaction."
  @spec import(db(), iodata()) :: {:ok, map()} | error()
  def import(db, bytes), do: raw(Native.nif_import(db, bytes))

  # ---------------------------------------------------------- the registry

  @doc """
  Run any verb of the registry by its wire name with its arguments in
  registry order (integers, booleans, atoms, binaries; `nil` for an absent
  optional one; a repeated tail given flat). Answers `{:ok, reply}` with the
  wire reply (integers, binaries, lists, maps, booleans, `nil`) or
  `{:error, reason}`.

      Emqlite.call(db, "drain", ["mail", true])          #=> {:ok, 3}
      Emqlite.call(db, "extend_locks", ["mail", 5000, id, 1])
  """
  @spec call(db(), String.t(), [term()]) :: {:ok, term()} | error()
  def call(db, verb, args) do
    case invoke(db, verb, args) do
      {:error, _, _} = e -> raw(e)
      {_code, reply} -> {:ok, reply}
    end
  end

  defp invoke(db, verb, args), do: Native.nif_call(db, verb, Enum.map(args, &arg/1))

  defp arg(nil), do: nil
  defp arg(true), do: "1"
  defp arg(false), do: "0"
  defp arg(i) when is_integer(i), do: Integer.to_string(i)
  defp arg(a) when is_atom(a), do: Atom.to_string(a)
  defp arg(b) when is_binary(b), do: b
  defp arg(b) when is_list(b), do: IO.iodata_to_binary(b)
  defp arg(other), do: raise(ArgumentError, "emqlite: not a verb argument: #{inspect(other)}")

  @fixed [:kind, :locked, :not_paused, :active, :not_dead, :rate, :nonmonotonic]

  @doc false
  def reason(code, _msg) when code in @fixed, do: code
  def reason(code, msg), do: {code, msg}

  defp raw({:error, code, msg}), do: {:error, reason(code, msg)}
  defp raw(:ok), do: :ok
  defp raw(other), do: other

  # Run `verb` and shape the outcome with `f.(code, reply)`; failures are
  # shaped here.
  defp run(db, verb, args, f) do
    case invoke(db, verb, args) do
      {:error, code, msg} -> {:error, reason(code, msg)}
      {code, reply} -> f.(code, reply)
    end
  end

  defp value(db, verb, args), do: run(db, verb, args, fn _, r -> {:ok, r} end)
  defp done(db, verb, args), do: run(db, verb, args, fn _, _ -> :ok end)
  defp verdict(db, verb, args), do: run(db, verb, args, fn code, _ -> {:ok, code} end)

  defp ok_gone(db, verb, args) do
    run(db, verb, args, fn
      :ok, _ -> :ok
      :gone, _ -> {:error, :gone}
    end)
  end

  defp flat_pairs(pairs), do: Enum.flat_map(pairs, fn {a, b} -> [a, b] end)

  defp job([id, payload, attempts]), do: {id, payload, attempts}

  # ------------------------------------------------ Tier 1: the core queue

  @doc """
  T1.1 enqueue: admit job `id` with `payload` into `q`'s pending set.
  `{:ok, :enqueued}`; `{:ok, :duplicate}` when a row `id` exists (nothing
  changes; the first payload stands); `{:error, :kind}` for an id that is
  not JOB-namespaced.
  """
  @spec enqueue(db(), queue(), id(), iodata()) :: {:ok, :enqueued | :duplicate} | error()
  def enqueue(db, q, id, payload), do: verdict(db, "enqueue", [q, id, payload])

  @doc """
  T1.2 enqueue_many: enqueue `[{id, payload}]` in order in one transaction:
  `{:ok, verdicts}`, one `:enqueued`, `:duplicate` or `:kind` per item.
  Every id is gated first; `[]` is `{:error, {:empty_pipeline, msg}}`.
  """
  @spec enqueue_many(db(), queue(), [{id(), iodata()}]) ::
          {:ok, [:enqueued | :duplicate | :kind]} | error()
  def enqueue_many(db, q, items) do
    run(db, "enqueue_many", [q | flat_pairs(items)], fn _, r ->
      {:ok,
       Enum.map(r, fn
         1 -> :enqueued
         0 -> :duplicate
         {:wire_error, _} -> :kind
       end)}
    end)
  end

  @doc "T1.3 enqueue_at: admit `id` scheduled at Unix ms `run_at_ms`: `{:ok, :scheduled}`, `{:ok, :duplicate}`, `{:error, :kind}`."
  @spec enqueue_at(db(), queue(), id(), iodata(), ms()) :: {:ok, :scheduled | :duplicate} | error()
  def enqueue_at(db, q, id, payload, run_at_ms),
    do: verdict(db, "enqueue_at", [q, id, payload, run_at_ms])

  @doc "T1.3 enqueue_in: admit `id` scheduled at NOW + `delay_ms` (>= 0)."
  @spec enqueue_in(db(), queue(), id(), iodata(), ms()) :: {:ok, :scheduled | :duplicate} | error()
  def enqueue_in(db, q, id, payload, delay_ms),
    do: verdict(db, "enqueue_in", [q, id, payload, delay_ms])

  @doc """
  T1.4 claim: pop the oldest pending job, lease it until NOW + `lease_ms`.
  `{:ok, {id, payload, attempts}}` (attempts is the fencing token for
  complete, retry and extend) or `:empty` (nothing pending, or paused).
  """
  @spec claim(db(), queue(), pos_integer()) :: {:ok, job()} | :empty | error()
  def claim(db, q, lease_ms) do
    run(db, "claim", [q, lease_ms], fn
      _, [] -> :empty
      _, r -> {:ok, job(r)}
    end)
  end

  @doc """
  T5.13 the waiting claim: reap and promote, claim one job, and when there
  is none wait until a commit (by any handle, in any process) adds work,
  a scheduled job or lease falls due, or `timeout_ms` passed. The wait runs
  on a dirty I/O scheduler in slices of at most `:slice` ms (250), so no
  call holds a scheduler or the handle for long; `interrupt/1` (from any
  process) ends it early. `{:ok, job}` or `:empty`.
  """
  @spec claim_wait(db(), queue(), pos_integer(), non_neg_integer() | :infinity, slice: pos_integer()) ::
          {:ok, job()} | :empty | error()
  def claim_wait(db, q, lease_ms, timeout_ms, opts \\ []) do
    slice = Keyword.get(opts, :slice, 250)
    deadline = if timeout_ms == :infinity, do: :infinity, else: System.monotonic_time(:millisecond) + timeout_ms
    wait_loop(db, q, lease_ms, deadline, slice)
  end

  defp wait_loop(db, q, lease_ms, deadline, slice) do
    left = if deadline == :infinity, do: slice, else: deadline - System.monotonic_time(:millisecond)
    wait = max(0, min(left, slice))

    case Native.nif_claim_wait(db, q, lease_ms, wait) do
      {:ok, j} -> {:ok, j}
      {:error, code, msg} -> {:error, reason(code, msg)}
      :interrupted -> :empty
      :empty when left <= slice -> :empty
      :empty -> wait_loop(db, q, lease_ms, deadline, slice)
    end
  end

  @doc "Make a `claim_wait/5` in progress on `db` (or the next one) return `:empty` promptly."
  @spec interrupt(db()) :: :ok
  def interrupt(db), do: Native.nif_interrupt(db)

  @doc """
  T1.5 complete with the current token (and an optional `result` recorded
  for a flow parent): `:ok`, `{:error, :gone}` (no row) or
  `{:error, {:stale, "EMQSTALE complete token mismatch"}}`.
  """
  @spec complete(db(), queue(), id(), token(), iodata() | nil) :: :ok | error()
  def complete(db, q, id, token, result \\ nil),
    do: ok_gone(db, "complete", [q, id, token, result])

  @doc """
  T1.6 retry with the current token: record `error` as last_error and
  reschedule at NOW + `delay_ms` (`{:ok, :scheduled}`), or dead-letter at
  `max_attempts` (`{:ok, :dead}`); `{:error, {:stale, msg}}` for a token
  mismatch or a missing row ("EMQSTALE job gone").
  """
  @spec retry(db(), queue(), id(), token(), ms(), integer(), iodata()) ::
          {:ok, :scheduled | :dead} | error()
  def retry(db, q, id, token, delay_ms, max_attempts, error),
    do: verdict(db, "retry", [q, id, token, delay_ms, max_attempts, error])

  @doc """
  Retry under the stored policy (`set_policy/4`): the job's own, else the
  queue's, else `fallback` `{max_attempts, backoff}` (nil: Appendix C's 3
  attempts, "fixed:1000"). Answers as `retry/7`.
  """
  @spec retry_by_policy(db(), queue(), id(), token(), iodata(), {pos_integer(), String.t()} | nil) ::
          {:ok, :scheduled | :dead} | error()
  def retry_by_policy(db, q, id, token, error, fallback \\ nil) do
    {max, spec} = fallback || {nil, nil}

    case Native.nif_retry_by_policy(db, q, id, token, error, max, spec) do
      {:error, code, msg} -> {:error, reason(code, msg)}
      code when is_atom(code) -> {:ok, code}
    end
  end

  @doc """
  Store the retry policy of queue `q` (or of one job, `id`): at most
  `max_attempts` attempts, `backoff` as the `backoff` verb writes it
  ("fixed:MS", "exponential:BASE:CAP", "jitter:POLICY"). Host-side, never
  exported.
  """
  @spec set_policy(db(), queue(), id() | nil, pos_integer(), String.t()) :: :ok | error()
  def set_policy(db, q, id \\ nil, max_attempts, backoff),
    do: raw(Native.nif_policy_set(db, q, id, max_attempts, backoff))

  @doc "Remove the retry policy of `q` (or of job `id`)."
  @spec clear_policy(db(), queue(), id() | nil) :: :ok | error()
  def clear_policy(db, q, id \\ nil), do: raw(Native.nif_policy_set(db, q, id, nil, nil))

  @doc "The policy that applies to job `id` (nil: the queue's): `{:ok, {max_attempts, backoff}}` or `:absent`."
  @spec get_policy(db(), queue(), id() | nil) :: {:ok, {pos_integer(), String.t()}} | :absent | error()
  def get_policy(db, q, id \\ nil), do: raw(Native.nif_policy_get(db, q, id))

  @doc "T1.7 promote: move up to `batch` due scheduled jobs to pending: `{:ok, count}`."
  @spec promote(db(), queue(), pos_integer()) :: {:ok, non_neg_integer()} | error()
  def promote(db, q, batch \\ 100), do: value(db, "promote", [q, batch])

  @doc "T1.8 reap: return up to 100 lapsed leases to pending: `{:ok, count}`."
  @spec reap(db(), queue()) :: {:ok, non_neg_integer()} | error()
  def reap(db, q), do: value(db, "reap", [q])

  @doc "T1.9 browse: the newest `n` pending ids, newest first."
  @spec browse(db(), queue(), pos_integer()) :: {:ok, [id()]} | error()
  def browse(db, q, n), do: value(db, "browse", [q, n])

  @doc "T1.10 pending_size: the number of pending jobs."
  @spec pending_size(db(), queue()) :: {:ok, non_neg_integer()} | error()
  def pending_size(db, q), do: value(db, "pending_size", [q])

  @doc "T1.11 extend_lock: lease to NOW + `lease_ms`: `:ok`, `{:error, :gone}`, `{:error, {:stale, msg}}`."
  @spec extend_lock(db(), queue(), id(), token(), pos_integer()) :: :ok | error()
  def extend_lock(db, q, id, token, lease_ms), do: ok_gone(db, "extend_lock", [q, id, token, lease_ms])

  @doc "T1.12 extend_locks: extend every matching `{id, token}`: `{:ok, ids_not_extended}`."
  @spec extend_locks(db(), queue(), pos_integer(), [{id(), token()}]) :: {:ok, [id()]} | error()
  def extend_locks(db, q, lease_ms, pairs), do: value(db, "extend_locks", [q, lease_ms | flat_pairs(pairs)])

  # ------------------------------------------ Tier 2: operator and reads

  @doc "T2.1 pause: claims answer `:empty` until `resume/2`."
  @spec pause(db(), queue()) :: :ok | error()
  def pause(db, q), do: done(db, "set_paused", [q])

  @doc "T2.1 resume a paused queue."
  @spec resume(db(), queue()) :: :ok | error()
  def resume(db, q), do: done(db, "clear_paused", [q])

  @doc "T2.2 drain: delete every pending job (and scheduled ones too): `{:ok, count}`."
  @spec drain(db(), queue(), boolean()) :: {:ok, non_neg_integer()} | error()
  def drain(db, q, include_schedule \\ false), do: value(db, "drain", [q, include_schedule])

  @doc """
  T2.3 obliterate a paused queue, at most `:budget` (1000) jobs per call
  (`:force` removes active jobs too): `:ok` when done, `{:ok, :more}` (call
  again), `{:error, :not_paused}` or `{:error, :active}`.
  """
  @spec obliterate(db(), queue(), force: boolean(), budget: pos_integer()) :: :ok | {:ok, :more} | error()
  def obliterate(db, q, opts \\ []) do
    run(db, "obliterate", [q, Keyword.get(opts, :force, false), Keyword.get(opts, :budget)], fn
      :ok, _ -> :ok
      :more, _ -> {:ok, :more}
    end)
  end

  @doc """
  T2.4 counts: `{:ok, %{name => n}}` for names among "pending", "active",
  "schedule", "dead", "completed", "failed"; another name is
  `{:error, {:refused, "unknown_state(name)"}}`.
  """
  @spec counts(db(), queue(), [String.t()]) :: {:ok, %{String.t() => integer()}} | error()
  def counts(db, q, names), do: value(db, "counts", [q | names])

  @doc "T2.5 get_job: the job's row as a map (`{:ok, fields}`), or `:absent`."
  @spec get_job(db(), queue(), id()) :: {:ok, %{String.t() => binary()}} | :absent | error()
  def get_job(db, q, id) do
    run(db, "get_job", [q, id], fn
      _, nil -> :absent
      _, m -> {:ok, m}
    end)
  end

  @states %{
    "pending" => :pending,
    "active" => :active,
    "scheduled" => :scheduled,
    "dead" => :dead,
    "awaiting_children" => :awaiting_children,
    "unknown" => :unknown,
    "absent" => :absent
  }

  @doc "T2.5 get_job_state: `:pending`, `:active`, `:scheduled`, `:dead`, `:awaiting_children`, `:unknown` or `:absent`."
  @spec get_job_state(db(), queue(), id()) ::
          {:ok, :pending | :active | :scheduled | :dead | :awaiting_children | :unknown | :absent} | error()
  def get_job_state(db, q, id), do: run(db, "get_job_state", [q, id], fn _, s -> {:ok, Map.fetch!(@states, s)} end)

  @doc "T2.6 get_metrics of \"completed\" or \"failed\": `{:ok, %{\"count\" => n, \"data_points\" => n}}`."
  @spec get_metrics(db(), queue(), String.t()) :: {:ok, map()} | error()
  def get_metrics(db, q, which), do: value(db, "get_metrics", [q, which])

  @doc "T2.7 the job id parked under dedup id `did`: `{:ok, id}` or `:absent`."
  @spec get_deduplication_job_id(db(), queue(), String.t()) :: {:ok, binary()} | :absent | error()
  def get_deduplication_job_id(db, q, did) do
    run(db, "get_deduplication_job_id", [q, did], fn
      :absent, _ -> :absent
      _, v -> {:ok, v}
    end)
  end

  @doc "T2.8 update_data: replace the payload in any state: `:ok` or `{:error, :gone}`."
  @spec update_data(db(), queue(), id(), iodata()) :: :ok | error()
  def update_data(db, q, id, payload), do: ok_gone(db, "update_data", [q, id, payload])

  @doc "T2.9 update_progress: set the progress and publish the event: `:ok` or `{:error, :gone}`."
  @spec update_progress(db(), queue(), id(), iodata()) :: :ok | error()
  def update_progress(db, q, id, progress), do: ok_gone(db, "update_progress", [q, id, progress])

  @doc "T2.10 add_log: append a line (keep the last `keep`): `{:ok, n}` or `{:error, :gone}`."
  @spec add_log(db(), queue(), id(), iodata(), non_neg_integer() | nil) :: {:ok, integer()} | error()
  def add_log(db, q, id, line, keep \\ nil) do
    run(db, "add_log", [q, id, line, keep], fn
      :gone, _ -> {:error, :gone}
      _, n -> {:ok, n}
    end)
  end

  @doc "T2.11 get_job_logs: `{:ok, lines}` or `{:error, :gone}`."
  @spec get_job_logs(db(), queue(), id()) :: {:ok, [binary()]} | error()
  def get_job_logs(db, q, id) do
    run(db, "get_job_logs", [q, id], fn
      :gone, _ -> {:error, :gone}
      _, l -> {:ok, l}
    end)
  end

  @doc "T2.12 remove_job (and its dedup key `did`): `:ok`, `{:error, :gone}`, `{:error, :locked}`."
  @spec remove_job(db(), queue(), id(), String.t() | nil) :: :ok | error()
  def remove_job(db, q, id, did \\ nil), do: ok_gone(db, "remove_job", [q, id, did])

  @doc "T2.13 reprocess_job: a dead job back to pending: `:ok`, `{:error, :gone}`, `{:error, :not_dead}`."
  @spec reprocess_job(db(), queue(), id()) :: :ok | error()
  def reprocess_job(db, q, id), do: ok_gone(db, "reprocess_job", [q, id])

  @doc "T2.14 claim_batch: up to `size` jobs on one deadline: `{:ok, [job]}` or `:empty`."
  @spec claim_batch(db(), queue(), pos_integer(), pos_integer()) :: {:ok, [job()]} | :empty | error()
  def claim_batch(db, q, size, lease_ms) do
    run(db, "claim_batch", [q, size, lease_ms], fn
      _, [] -> :empty
      _, l -> {:ok, Enum.map(l, &job/1)}
    end)
  end

  @doc """
  T2.15 delay an active job to NOW + `ms` (`:in`) or to Unix ms `ms`
  (`:at`): `:ok`, `{:error, :gone}`, `{:error, {:stale, msg}}`,
  `{:error, :kind}`.
  """
  @spec delay(db(), queue(), id(), token(), ms(), :in | :at) :: :ok | error()
  def delay(db, q, id, token, ms, mode \\ :in), do: ok_gone(db, "delay", [q, id, token, ms, mode])

  @doc "T2.16 is_maxed: `:ok` below the concurrency ceiling, `{:error, :rate}` at it."
  @spec is_maxed(db(), queue()) :: :ok | error()
  def is_maxed(db, q), do: done(db, "is_maxed", [q])

  @doc "T2.16 get_rate_limit_ttl: the limiter's remaining TTL in ms (0 when not limited)."
  @spec get_rate_limit_ttl(db(), queue(), non_neg_integer() | nil) :: {:ok, ms()} | error()
  def get_rate_limit_ttl(db, q, max_jobs \\ nil), do: value(db, "get_rate_limit_ttl", [q, max_jobs])

  @doc "T2.16 get_global_rate_limit: the queue's meta `max` (0 when unset)."
  @spec get_global_rate_limit(db(), queue()) :: {:ok, non_neg_integer()} | error()
  def get_global_rate_limit(db, q), do: value(db, "get_global_rate_limit", [q])

  @doc """
  The figures of a queue in one read: pending, active, schedule, dead,
  completed, failed (T2.4's names).
  """
  @spec stats(db(), queue()) :: {:ok, %{String.t() => integer()}} | error()
  def stats(db, q), do: counts(db, q, ~w(pending active schedule dead completed failed))

  # ------------------------------------------- beyond the wire: operator

  @doc """
  A page of a job set ("pending", "active", "schedule", "dead"):
  `{:ok, [{member, score}]}`. Options `:offset`, `:count`, `:from`
  (`:head` or `:tail`).
  """
  @spec list_set(db(), queue(), String.t(), keyword()) :: {:ok, [{binary(), integer()}]} | error()
  def list_set(db, q, set, opts \\ []) do
    run(db, "list_set", [q, set, opts[:offset], opts[:count], opts[:from]], fn _, l ->
      {:ok, Enum.map(l, fn [m, s] -> {m, s} end)}
    end)
  end

  @doc "A page of group `g`'s lane: `{:ok, [{member, score}]}` (options as `list_set/4`)."
  @spec list_lane(db(), queue(), group(), keyword()) :: {:ok, [{binary(), integer()}]} | error()
  def list_lane(db, q, g, opts \\ []) do
    run(db, "list_lane", [q, g, opts[:offset], opts[:count], opts[:from]], fn _, l ->
      {:ok, Enum.map(l, fn [m, s] -> {m, s} end)}
    end)
  end

  @doc "Everything about one job in one read: state, row, deadline, run_at, logs, locked."
  @spec job_info(db(), queue(), id()) :: {:ok, map()} | error()
  def job_info(db, q, id), do: value(db, "job_info", [q, id])

  @doc "Requeue every dead job, `batch` per transaction: `{:ok, {requeued, skipped}}`."
  @spec requeue_dead(db(), queue(), pos_integer() | nil) :: {:ok, {integer(), integer()}} | error()
  def requeue_dead(db, q, batch \\ nil), do: run(db, "requeue_dead", [q, batch], fn _, [a, b] -> {:ok, {a, b}} end)

  @doc "The lanes of a queue: `{:ok, {total, [{group, depth, paused?}]}}` (at most `count`)."
  @spec lanes(db(), queue(), non_neg_integer() | nil) :: {:ok, {integer(), [{group(), integer(), boolean()}]}} | error()
  def lanes(db, q, count \\ nil) do
    run(db, "lanes", [q, count], fn _, [total, l] ->
      {:ok, {total, Enum.map(l, fn [g, d, p] -> {g, d, p == 1 or p == true} end)}}
    end)
  end

  # --------------------------------------------------- Tier 3: fair lanes

  @doc "T3.1 lane_enqueue into group `g`'s lane: `{:ok, :enqueued}`, `{:ok, :duplicate}`, `{:error, :kind}`."
  @spec lane_enqueue(db(), queue(), group(), id(), iodata()) :: {:ok, :enqueued | :duplicate} | error()
  def lane_enqueue(db, q, g, id, payload), do: verdict(db, "lane_enqueue", [q, g, id, payload])

  @doc "T3.2 lane_claim: rotate the ring and claim: `{:ok, {id, payload, attempts, group}}` or `:empty`."
  @spec lane_claim(db(), queue(), pos_integer()) :: {:ok, {id(), binary() | nil, token(), group()}} | :empty | error()
  def lane_claim(db, q, lease_ms) do
    run(db, "lane_claim", [q, lease_ms], fn
      _, [] -> :empty
      _, [id, p, a, g] -> {:ok, {id, p, a, g}}
    end)
  end

  defp lane_batch(db, verb, q, lease_ms) do
    run(db, verb, [q, lease_ms], fn
      _, [] -> :empty
      _, l -> {:ok, Enum.map(l, fn [id, p, a, g] -> {id, p, a, g} end)}
    end)
  end

  @doc "T3.3 wclaim: up to the group's weight of jobs: `{:ok, [{id, payload, attempts, group}]}` or `:empty`."
  @spec wclaim(db(), queue(), pos_integer()) :: {:ok, [{id(), binary() | nil, token(), group()}]} | :empty | error()
  def wclaim(db, q, lease_ms), do: lane_batch(db, "wclaim", q, lease_ms)

  @doc "T3.4 bclaim: the rotated lane up to its limit: as `wclaim/3`."
  @spec bclaim(db(), queue(), pos_integer()) :: {:ok, [{id(), binary() | nil, token(), group()}]} | :empty | error()
  def bclaim(db, q, lease_ms), do: lane_batch(db, "bclaim", q, lease_ms)

  @doc "T3.5 weight of group `g` (>= 1) for weighted claims."
  @spec weight(db(), queue(), group(), pos_integer()) :: :ok | error()
  def weight(db, q, g, w), do: done(db, "weight", [q, g, w])

  @doc "T3.6 lane_pause: group `g` leaves the ring until resumed."
  @spec lane_pause(db(), queue(), group()) :: :ok | error()
  def lane_pause(db, q, g), do: done(db, "lane_pause", [q, g])

  @doc "T3.7 lane_resume: group `g` is offered again."
  @spec lane_resume(db(), queue(), group()) :: :ok | error()
  def lane_resume(db, q, g), do: done(db, "lane_resume", [q, g])

  @doc "T3.8 limit: group `g`'s concurrency ceiling (> 0)."
  @spec limit(db(), queue(), group(), pos_integer()) :: :ok | error()
  def limit(db, q, g, n), do: done(db, "limit", [q, g, n])

  @doc """
  T3.9 reassign a waiting job to group `dst`'s lane: `{:ok, :reassigned}`,
  `{:ok, :noop}` (already there), `{:error, :not_found}`,
  `{:error, :not_pending}`.
  """
  @spec reassign(db(), queue(), id(), group()) :: {:ok, :reassigned | :noop} | error()
  def reassign(db, q, id, dst) do
    run(db, "reassign", [q, id, dst], fn
      :ok, _ -> {:ok, :reassigned}
      :noop, _ -> {:ok, :noop}
      :gone, _ -> {:error, :not_found}
      :not_pending, _ -> {:error, :not_pending}
    end)
  end

  @doc "T3.10 lane_drain: delete every job waiting in `g`'s lane: `{:ok, count}`."
  @spec lane_drain(db(), queue(), group()) :: {:ok, non_neg_integer()} | error()
  def lane_drain(db, q, g), do: value(db, "lane_drain", [q, g])

  @doc "T3.11 reap_group: return `g`'s lapsed leases (of the first `limit`) to its lane: `{:ok, count}`."
  @spec reap_group(db(), queue(), group(), pos_integer() | nil) :: {:ok, non_neg_integer()} | error()
  def reap_group(db, q, g, limit \\ nil), do: value(db, "reap_group", [q, g, limit])

  @doc "T3.12 depth of `g`'s lane."
  @spec depth(db(), queue(), group()) :: {:ok, non_neg_integer()} | error()
  def depth(db, q, g), do: value(db, "depth", [q, g])

  @doc "T3.12 lane_depths: `{:ok, %{group => depth}}`."
  @spec lane_depths(db(), queue(), [group()]) :: {:ok, %{group() => non_neg_integer()}} | error()
  def lane_depths(db, q, groups), do: value(db, "lane_depths", [q | groups])

  # -------------------------------------------------------- Tier 4: flows

  @typedoc """
  A flow node: `%{id: id, payload: iodata}` with optional `:queue` (its
  parent's by default), `:policy` (`:fp`, the default: a child's death
  fails the parent; `:id`: ignored) and `:children`.
  """
  @type flow_node :: %{
          required(:id) => id(),
          required(:payload) => iodata(),
          optional(:queue) => queue(),
          optional(:policy) => :fp | :id,
          optional(:children) => [flow_node()]
        }

  defp flow_args(node, q, level) do
    nq = Map.get(node, :queue, q)

    [level, node.id, node.payload, nq, Map.get(node, :policy, :fp)] ++
      Enum.flat_map(Map.get(node, :children, []), &flow_args(&1, nq, level + 1))
  end

  @doc """
  T4.1/T4.4/T4.5 flow_add: add a flow (a parent held until its children
  finish; children in other queues and nested trees too). `{:ok, reply}`
  with the wire reply; `{:error, :kind}`, `{:error, {:refused,
  "flow_too_deep(8)"}}` or `{:error, {:refused, "flow_cycle(id)"}}`.
  """
  @spec flow_add(db(), queue(), flow_node()) :: {:ok, {id(), [id()]}} | error()
  def flow_add(db, q, root),
    do: run(db, "flow_add", [q | flow_args(root, q, 1)], fn _, [p, kids] -> {:ok, {p, kids}} end)

  @doc "T4.6 add_bulk: several flows, every id gated first: `{:ok, verdicts}`."
  @spec add_bulk(db(), queue(), [flow_node()]) :: {:ok, term()} | error()
  def add_bulk(db, q, roots), do: value(db, "add_bulk", [q | Enum.flat_map(roots, &flow_args(&1, q, 1))])

  @doc "T4.1 enqueue_flow: `parent` held over same-queue `[{id, payload}]` children in one transaction."
  @spec enqueue_flow(db(), queue(), id(), iodata(), [{id(), iodata()}]) :: :ok | error()
  def enqueue_flow(db, q, parent, payload, children),
    do: done(db, "enqueue_flow", [q, parent, payload | flat_pairs(children)])

  @doc "T4.10 deliver_flow_completions: one sweep of `q`'s outbox: `{:ok, delivered}`."
  @spec deliver_flow_completions(db(), queue(), pos_integer()) :: {:ok, non_neg_integer()} | error()
  def deliver_flow_completions(db, q, batch \\ 100), do: value(db, "deliver_flow_completions", [q, batch])

  @doc "T4.8 children_values: `{:ok, %{child_id => result}}`."
  @spec children_values(db(), queue(), id()) :: {:ok, %{binary() => binary()}} | error()
  def children_values(db, q, parent), do: value(db, "children_values", [q, parent])

  @doc "T4.8 ignored_failures: `{:ok, %{child_id => error}}` of `:id`-policy children."
  @spec ignored_failures(db(), queue(), id()) :: {:ok, %{binary() => binary()}} | error()
  def ignored_failures(db, q, parent), do: value(db, "ignored_failures", [q, parent])

  @doc "T4.8 dependencies: the parent's outstanding children."
  @spec dependencies(db(), queue(), id()) :: {:ok, integer()} | error()
  def dependencies(db, q, parent), do: value(db, "dependencies", [q, parent])

  @doc "Finish every flow add a crash cut short: `{:ok, finished}`."
  @spec flow_recover(db()) :: {:ok, non_neg_integer()} | error()
  def flow_recover(db), do: value(db, "flow_recover", [])

  @doc "The flow below `parent`: `{:ok, [node_map]}` depth first."
  @spec flow_tree(db(), queue(), id()) :: {:ok, [map()]} | error()
  def flow_tree(db, q, parent), do: value(db, "flow_tree", [q, parent])

  # ------------------------------------ Tier 5: scheduling and the worker

  @doc "T5.8 repeat_register: `{:ok, :registered}` or `{:ok, :exists}`."
  @spec repeat_register(db(), queue(), String.t(), pos_integer(), iodata(), non_neg_integer()) ::
          {:ok, :registered | :exists} | error()
  def repeat_register(db, q, name, every_ms, template, first_in_ms \\ 0) do
    run(db, "repeat_register", [q, name, every_ms, template, first_in_ms], fn
      :ok, _ -> {:ok, :registered}
      :exists, _ -> {:ok, :exists}
    end)
  end

  @doc "T5.8 repeat_cancel: `{:ok, :cancelled}` or `:absent`."
  @spec repeat_cancel(db(), queue(), String.t()) :: {:ok, :cancelled} | :absent | error()
  def repeat_cancel(db, q, name) do
    run(db, "repeat_cancel", [q, name], fn
      :ok, _ -> {:ok, :cancelled}
      :absent, _ -> :absent
    end)
  end

  @doc "T5.8 repeat_advance: `{:ok, :advanced}` or `:absent`."
  @spec repeat_advance(db(), queue(), String.t(), pos_integer()) :: {:ok, :advanced} | :absent | error()
  def repeat_advance(db, q, name, every_ms) do
    run(db, "repeat_advance", [q, name, every_ms], fn
      :ok, _ -> {:ok, :advanced}
      :absent, _ -> :absent
    end)
  end

  @doc "T5.8 repeat_due: up to `limit` due registrations as `{name, every_ms, template}`."
  @spec repeat_due(db(), queue(), pos_integer()) :: {:ok, [{binary(), binary(), binary()}]} | error()
  def repeat_due(db, q, limit), do: run(db, "repeat_due", [q, limit], fn _, l -> {:ok, Enum.map(l, &List.to_tuple/1)} end)

  @doc "T5.8 repeat_count: the number of registrations."
  @spec repeat_count(db(), queue()) :: {:ok, non_neg_integer()} | error()
  def repeat_count(db, q), do: value(db, "repeat_count", [q])

  @doc "T5.9 sweep: promote, fire due repeats, deliver flow completions: `{:ok, %{\"promoted\", \"fired\", \"delivered\"}}`."
  @spec sweep(db(), queue(), pos_integer() | nil) :: {:ok, map()} | error()
  def sweep(db, q, batch \\ nil), do: value(db, "sweep", [q, batch])

  @doc "T5.10 backoff: the delay after failed attempt `attempts` under `policy` (\"exponential:100:10000\")."
  @spec backoff(db(), pos_integer(), String.t()) :: {:ok, ms()} | error()
  def backoff(db, attempts, policy), do: value(db, "backoff", [attempts | String.split(policy, ":")])

  @doc "T5.11 stalled_check: `{:ok, {recovered_ids, dead_ids}}`."
  @spec stalled_check(db(), queue(), pos_integer() | nil, pos_integer() | nil) :: {:ok, {[id()], [id()]}} | error()
  def stalled_check(db, q, max_stalled \\ nil, limit \\ nil),
    do: run(db, "stalled_check", [q, max_stalled, limit], fn _, [r, d] -> {:ok, {r, d}} end)

  @doc "T5.11 job_stalled?: whether the row counts a stall."
  @spec job_stalled(db(), queue(), id()) :: {:ok, boolean()} | error()
  def job_stalled(db, q, id), do: value(db, "job_stalled", [q, id])

  # -------------------------------------------------------- Tier 5 streams

  @doc "T5.2 append a record (field/value pairs) under a freshly minted EVT id: `{:ok, id}`."
  @spec append(db(), queue(), String.t(), [{iodata(), iodata()}]) :: {:ok, id()} | error()
  def append(db, q, name, fields), do: value(db, "append", [q, name, nil | flat_pairs(fields)])

  @doc "T5.2 append_id under the given EVT id: `{:ok, id}`, `{:error, :nonmonotonic}`, `{:error, {:refused, \"kind\"}}`."
  @spec append_id(db(), queue(), String.t(), id(), [{iodata(), iodata()}]) :: {:ok, id()} | error()
  def append_id(db, q, name, id, fields), do: value(db, "append_id", [q, name, id | flat_pairs(fields)])

  defp entries(l), do: Enum.map(l, fn [xid, f] -> {xid, f} end)

  @doc "T5.3 read: `{:ok, [{id, %{field => value}}]}` between `:from` and `:to` entry ids, at most `:count`."
  @spec read(db(), queue(), String.t(), keyword()) :: {:ok, [{id(), map()}]} | error()
  def read(db, q, name, opts \\ []),
    do: run(db, "read", [q, name, opts[:from], opts[:to], opts[:count]], fn _, l -> {:ok, entries(l)} end)

  @doc "T5.3 read_window: the records minted in [t0_ms, t1_ms]."
  @spec read_window(db(), queue(), String.t(), ms(), ms(), integer() | nil) :: {:ok, [{id(), map()}]} | error()
  def read_window(db, q, name, t0, t1, count \\ nil),
    do: run(db, "read_window", [q, name, t0, t1, count], fn _, l -> {:ok, entries(l)} end)

  @doc "T5.3 read_since: the records minted at or after t0_ms."
  @spec read_since(db(), queue(), String.t(), ms(), integer() | nil) :: {:ok, [{id(), map()}]} | error()
  def read_since(db, q, name, t0, count \\ nil),
    do: run(db, "read_since", [q, name, t0, count], fn _, l -> {:ok, entries(l)} end)

  @doc "The raw range read (XRANGE): `{:ok, [{entry_id, [field, value, ...]}]}`."
  @spec stream_range(db(), queue(), String.t(), String.t(), String.t(), integer() | nil) ::
          {:ok, [{String.t(), [binary()]}]} | error()
  def stream_range(db, q, name, from \\ "-", to \\ "+", count \\ nil),
    do: run(db, "stream_range", [q, name, from, to, count], fn _, l -> {:ok, entries(l)} end)

  @doc "The number of entries of a stream."
  @spec stream_len(db(), queue(), String.t()) :: {:ok, non_neg_integer()} | error()
  def stream_len(db, q, name), do: value(db, "stream_len", [q, name])

  @doc "T5.4 trim by `:maxlen` (keep the newest n) or `:minid` (drop below ms): `{:ok, removed}`."
  @spec trim(db(), queue(), String.t(), :maxlen | :minid, non_neg_integer(), boolean()) ::
          {:ok, non_neg_integer()} | error()
  def trim(db, q, name, kind, value, exact \\ true), do: value(db, "trim", [q, name, kind, value, exact])

  @doc "T5.5 put_archived: set the archive watermark cache."
  @spec put_archived(db(), queue(), String.t(), iodata()) :: :ok | error()
  def put_archived(db, q, name, w), do: done(db, "put_archived", [q, name, w])

  @doc "T5.5 get_archived: `{:ok, watermark}` or `:absent`."
  @spec get_archived(db(), queue(), String.t()) :: {:ok, binary()} | :absent | error()
  def get_archived(db, q, name) do
    run(db, "get_archived", [q, name], fn
      :absent, _ -> :absent
      _, w -> {:ok, w}
    end)
  end

  @doc "T5.5 clear_archived: `:ok` when it existed, else `:absent`."
  @spec clear_archived(db(), queue(), String.t()) :: :ok | :absent | error()
  def clear_archived(db, q, name) do
    run(db, "clear_archived", [q, name], fn
      :absent, _ -> :absent
      _, _ -> :ok
    end)
  end

  @doc "T5.6 group_create at `start` (\"$\" or \"0\"): `:ok` or `{:error, {:engine, \"BUSYGROUP ...\"}}`."
  @spec group_create(db(), queue(), String.t(), String.t(), String.t(), boolean()) :: :ok | error()
  def group_create(db, q, name, group, start \\ "$", mkstream \\ true),
    do: done(db, "group_create", [q, name, group, start, mkstream])

  @doc """
  T5.6 group_read as `consumer` from `id` (">" for new entries), at most
  `:count`, waiting up to `:block` ms: `{:ok, [{entry_id, fields}]}` or
  `:empty`.
  """
  @spec group_read(db(), queue(), String.t(), String.t(), String.t(), String.t(), keyword()) ::
          {:ok, [{String.t(), [binary()]}]} | :empty | error()
  def group_read(db, q, name, group, consumer, id \\ ">", opts \\ []) do
    run(db, "group_read", [q, name, group, consumer, id, opts[:count], opts[:block]], fn
      :empty, _ -> :empty
      _, nil -> :empty
      _, l -> {:ok, entries(l)}
    end)
  end

  @doc "T5.6 ack entry ids: `{:ok, acked}`."
  @spec ack(db(), queue(), String.t(), String.t(), [String.t()]) :: {:ok, non_neg_integer()} | error()
  def ack(db, q, name, group, xids), do: value(db, "ack", [q, name, group | xids])

  @doc "T5.6 autoclaim: `{:ok, {next, [{entry_id, fields}], deleted_ids}}`."
  @spec autoclaim(db(), queue(), String.t(), String.t(), String.t(), ms(), String.t(), pos_integer() | nil) ::
          {:ok, {String.t(), list(), list()}} | error()
  def autoclaim(db, q, name, group, consumer, min_idle_ms, start \\ "0", count \\ nil) do
    run(db, "autoclaim", [q, name, group, consumer, min_idle_ms, start, count], fn _, [next, l, d] ->
      {:ok, {next, entries(l), d}}
    end)
  end

  @doc "T5.6 pending_range: `{:ok, [{entry_id, consumer, idle_ms, deliveries}]}`."
  @spec pending_range(db(), queue(), String.t(), String.t(), String.t(), String.t(), integer()) ::
          {:ok, [{String.t(), binary(), integer(), integer()}]} | error()
  def pending_range(db, q, name, group, start \\ "-", stop \\ "+", count \\ 100),
    do: run(db, "pending_range", [q, name, group, start, stop, count], fn _, l -> {:ok, Enum.map(l, &List.to_tuple/1)} end)
end
