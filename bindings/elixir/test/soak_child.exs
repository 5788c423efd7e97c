# One OS process of the soak (test/interop_test.exs): an Emqlite.Worker of
# two runners over the file argv[0], until the queue is settled; it writes
# the ids it completed to argv[1], one a line.
[path, out] = System.argv()

defmodule SoakJob do
  use Emqlite.Worker

  @impl true
  # A "flaky" job fails its first attempt (and is retried under the queue's
  # policy, by whichever process claims it next).
  def perform({_id, "flaky", 1}), do: {:error, "flaky first attempt"}
  def perform({_id, _payload, _attempts}), do: :ok
end

defmodule Collector do
  def loop(acc) do
    receive do
      {:emqlite_worker, :completed, {id, _, _}} -> loop([id | acc])
      {:emqlite_worker, _, _} -> loop(acc)
      {:done, from} -> send(from, {:ids, acc})
    end
  end
end

collector = spawn_link(fn -> Collector.loop([]) end)
{:ok, sup} = SoakJob.start_link(path: path, queue: "soak", concurrency: 2, notify: collector, slice: 100)
{:ok, db} = Emqlite.open(path)

wait = fn wait ->
  {:ok, c} = Emqlite.counts(db, "soak", ["pending", "active", "schedule"])
  if c["pending"] + c["active"] + c["schedule"] == 0, do: :ok, else: (Process.sleep(50); wait.(wait))
end

wait.(wait)
Supervisor.stop(sup)
send(collector, {:done, self()})
receive do
  {:ids, ids} -> File.write!(out, Enum.map(ids, &[&1, "\n"]))
end
