defmodule EmqliteWorkerTest do
  use ExUnit.Case, async: false

  defmodule Echo do
    use Emqlite.Worker

    @impl true
    def perform({_id, "ok" <> _, _}), do: :ok
    def perform({_id, "result", _}), do: {:ok, "the result"}
    def perform({_id, "fail", _}), do: {:error, "refused"}
    def perform({_id, "raise", _}), do: raise("kaboom")
    def perform({_id, "abandon", _}), do: :abandon

    def perform({_id, "slow:" <> who, _}) do
      send(String.to_atom(who), {:started, self()})
      receive do
        :go -> :ok
      end
    end
  end

  setup do
    tmp = Path.join(System.tmp_dir!(), "emqlite-worker-#{System.unique_integer([:positive])}")
    File.mkdir_p!(tmp)
    on_exit(fn -> File.rm_rf!(tmp) end)
    path = Path.join(tmp, "w.db")
    {:ok, db} = Emqlite.open(path)
    on_exit(fn -> Emqlite.close(db) end)
    %{db: db, path: path}
  end

  defp put(db, payload) do
    {:ok, id} = Emqlite.mint(db)
    {:ok, :enqueued} = Emqlite.enqueue(db, "w", id, payload)
    id
  end

  test "workers complete, retry under the queue's policy and dead-letter", %{db: db, path: path} do
    :ok = Emqlite.set_policy(db, "w", 2, "fixed:0")
    ok = for _ <- 1..20, do: put(db, "ok")
    failing = put(db, "fail")
    raising = put(db, "raise")
    start_supervised!({Echo, path: path, queue: "w", concurrency: 3, notify: self(), slice: 50})

    done = collect(22, %{})
    assert Enum.sort(for {id, :completed} <- done, do: id) == Enum.sort(ok)
    assert {failing, :dead} in done and {raising, :dead} in done
    assert {:ok, %{"last_error" => "kaboom"}} = Emqlite.get_job(db, "w", raising)
    assert {:ok, %{"completed" => 20, "dead" => 2, "pending" => 0, "active" => 0}} = Emqlite.stats(db, "w")
  end

  test "a shared in-memory handle, the fallback policy, and abandon" do
    %{db: db} = Emqlite.Testing.open()
    id = put(db, "fail")
    gone = put(db, "abandon")
    start_supervised!({Echo, db: db, queue: "w", notify: self(), retry: {1, "fixed:0"}, slice: 20})
    assert_receive {:emqlite_worker, :dead, {^id, "fail", 1}}, 5_000
    assert_receive {:emqlite_worker, :abandoned, {^gone, "abandon", 1}}, 5_000
    assert {:ok, :active} = Emqlite.get_job_state(db, "w", gone)
  end

  test "graceful shutdown lets the job in hand finish and settles it", %{db: db, path: path} do
    Process.register(self(), :worker_test_owner)
    id = put(db, "slow:worker_test_owner")
    sup = start_supervised!({Echo, path: path, queue: "w", notify: self(), slice: 50, shutdown: 10_000})
    assert_receive {:started, performer}, 5_000
    stopper = Task.async(fn -> Supervisor.stop(sup) end)
    # The runner is waiting for the job: the supervisor has not stopped yet.
    refute Task.yield(stopper, 200)
    send(performer, :go)
    Task.await(stopper, 10_000)
    assert_receive {:emqlite_worker, :completed, {^id, _, 1}}
    assert {:ok, :absent} = Emqlite.get_job_state(db, "w", id)
  end

  test "a job still running at the shutdown deadline is left to its lease", %{db: db, path: path} do
    Process.register(self(), :worker_test_owner2)
    id = put(db, "slow:worker_test_owner2")
    sup = start_supervised!({Echo, path: path, queue: "w", notify: self(), slice: 50, shutdown: 100})
    assert_receive {:started, performer}, 5_000
    ref = Process.monitor(performer)
    Supervisor.stop(sup)
    assert_receive {:emqlite_worker, :abandoned, {^id, _, 1}}
    assert_receive {:DOWN, ^ref, :process, _, :killed}
    assert {:ok, :active} = Emqlite.get_job_state(db, "w", id)
  end

  test "the result of perform/1 is recorded for a flow parent", %{db: db, path: path} do
    [p, c] = for _ <- 1..2, do: elem(Emqlite.mint(db), 1)
    {:ok, {^p, [^c]}} = Emqlite.flow_add(db, "w", %{id: p, payload: "ok-parent", children: [%{id: c, payload: "result"}]})
    start_supervised!({Echo, path: path, queue: "w", notify: self(), slice: 50})
    assert_receive {:emqlite_worker, :completed, {^c, _, 1}}, 5_000
    assert_receive {:emqlite_worker, :completed, {^p, _, 1}}, 5_000
  end

  defp collect(0, acc), do: acc |> Enum.to_list()

  defp collect(n, acc) do
    receive do
      {:emqlite_worker, :retried, _} -> collect(n, acc)
      {:emqlite_worker, what, {id, _, _}} -> collect(n - 1, Map.put(acc, id, what))
    after
      10_000 -> flunk("only #{map_size(acc)} jobs settled: #{inspect(acc)}")
    end
  end
end
