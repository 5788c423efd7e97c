defmodule EmqliteTest do
  use ExUnit.Case, async: true
  use Emqlite.Testing

  @q "mail"
  @a "JOB0KHTOWnGLuC"
  @b "JOB0KHTOWnGLuD"
  @c "JOB0KHTOWnGLuE"
  @g "PRT0KHTOWnGLuC"
  @h "PRT0KHTOWnGLuD"

  describe "tier 1 answers the reference's shapes" do
    test "enqueue: enqueued, duplicate (first payload stands), kind", %{db: db} do
      assert {:ok, :enqueued} = Emqlite.enqueue(db, @q, @a, "one")
      assert {:ok, :duplicate} = Emqlite.enqueue(db, @q, @a, "other")
      assert {:error, :kind} = Emqlite.enqueue(db, @q, "USR0KHTOWnGLuC", "x")
      assert {:ok, %{"payload" => "one", "state" => "pending"}} = Emqlite.get_job(db, @q, @a)
    end

    test "host gates name the argument and touch nothing", %{db: db} do
      assert {:error, {:invalid_queue, _}} = Emqlite.enqueue(db, "bad queue", @a, "x")
      assert {:error, {:invalid_id, _}} = Emqlite.enqueue(db, @q, "nope", "x")
      assert {:error, {:invalid_argument, msg}} = Emqlite.claim(db, @q, 0)
      assert msg =~ "lease_ms"
      assert {:ok, []} = Emqlite.queues(db)
    end

    test "enqueue_many answers one verdict per item; an empty batch is refused", %{db: db} do
      assert {:ok, [:enqueued, :kind, :duplicate]} =
               Emqlite.enqueue_many(db, @q, [{@a, "a"}, {"USR0KHTOWnGLuC", "u"}, {@a, "again"}])

      assert {:error, {:empty_pipeline, _}} = Emqlite.enqueue_many(db, @q, [])
    end

    test "claim, complete, stale tokens and gone rows", %{db: db} do
      assert :empty = Emqlite.claim(db, @q, 1000)
      {:ok, :enqueued} = Emqlite.enqueue(db, @q, @a, <<0, 1, 2, 255>>)
      assert {:ok, {@a, <<0, 1, 2, 255>>, 1}} = Emqlite.claim(db, @q, 30_000)
      assert {:error, {:stale, "EMQSTALE complete token mismatch"}} = Emqlite.complete(db, @q, @a, 7)
      assert {:error, {:stale, "EMQSTALE extend token mismatch"}} = Emqlite.extend_lock(db, @q, @a, 7, 1000)
      assert :ok = Emqlite.extend_lock(db, @q, @a, 1, 1000)
      assert :ok = Emqlite.complete(db, @q, @a, 1)
      assert {:error, :gone} = Emqlite.complete(db, @q, @a, 1)
      assert {:error, {:stale, "EMQSTALE job gone"}} = Emqlite.retry(db, @q, @a, 1, 0, 3, "x")
      assert {:ok, %{"count" => 1}} = Emqlite.get_metrics(db, @q, "completed")
    end

    test "retry schedules on the clock, then dead-letters at the cap", %{db: db, clock: clock} do
      {:ok, :enqueued} = Emqlite.enqueue(db, @q, @a, "x")
      {:ok, {@a, _, 1}} = Emqlite.claim(db, @q, 1000)
      assert {:ok, :scheduled} = Emqlite.retry(db, @q, @a, 1, 500, 2, "boom")
      assert {:ok, 0} = Emqlite.promote(db, @q)
      advance(clock, 500)
      assert {:ok, 1} = Emqlite.promote(db, @q)
      {:ok, {@a, _, 2}} = Emqlite.claim(db, @q, 1000)
      assert {:ok, :dead} = Emqlite.retry(db, @q, @a, 2, 500, 2, "boom again")
      assert {:ok, :dead} = Emqlite.get_job_state(db, @q, @a)
      assert :ok = Emqlite.reprocess_job(db, @q, @a)
      assert {:error, :not_dead} = Emqlite.reprocess_job(db, @q, @a)
    end

    test "a job's history tells why it failed; the failures level", %{db: db, clock: clock} do
      {:ok, t0} = Emqlite.now(db)
      assert {:ok, :on} = Emqlite.history_level(db)
      {:ok, :enqueued} = Emqlite.enqueue(db, @q, @a, "x")
      advance(clock, 10)
      {:ok, {@a, _, 1}} = Emqlite.claim(db, @q, 1000)
      {:ok, :scheduled} = Emqlite.retry(db, @q, @a, 1, 2000, 2, "smtp 421")
      assert {:ok, [e, c, r]} = Emqlite.history(db, @a)
      assert %{kind: "enqueued", at: ^t0, attempts: nil, error: nil} = e
      assert %{kind: "claimed", attempts: 1, host: host, pid: pid} = c
      assert is_binary(host) and is_integer(pid) and pid > 0
      assert %{kind: "retried", attempts: 1, delay: 2000, error: "smtp 421", queue: @q, job: @a} = r
      assert r.at == t0 + 10 and r.run_at == t0 + 2010 and e.seq < c.seq and c.seq < r.seq
      assert {:ok, [_, _, _]} = Emqlite.history(db, @a, queue: @q)
      assert {:ok, []} = Emqlite.history(db, @a, queue: "other")
      assert {:error, {:invalid_id, _}} = Emqlite.history(db, "JOB-not-an-id-at-all")
      assert {:error, {:invalid_queue, _}} = Emqlite.history(db, @a, queue: "bad queue")
      assert :ok = Emqlite.set_history_level(db, :failures)
      assert {:ok, :failures} = Emqlite.history_level(db)
      {:ok, :enqueued} = Emqlite.enqueue(db, @q, @b, "y")
      {:ok, {@b, _, 1}} = Emqlite.claim(db, @q, 1000)
      :ok = Emqlite.complete(db, @q, @b, 1)
      assert {:ok, []} = Emqlite.history(db, @b)
      assert {:error, {:invalid_argument, _}} = Emqlite.set_history_level(db, :some)
      assert :ok = Emqlite.set_history_level(db, :off)
      assert {:ok, :off} = Emqlite.history_level(db)
    end

    test "a lapsed lease is reaped on the fake clock", %{db: db, clock: clock} do
      {:ok, :enqueued} = Emqlite.enqueue(db, @q, @a, "x")
      {:ok, {@a, "x", 1}} = Emqlite.claim(db, @q, 30_000)
      advance(clock, 29_999)
      assert {:ok, 0} = Emqlite.reap(db, @q)
      advance(clock, 1)
      assert {:ok, 1} = Emqlite.reap(db, @q)
      assert {:ok, {@a, "x", 2}} = Emqlite.claim(db, @q, 30_000)
    end

    test "scheduled admissions, browse, pending_size, extend_locks", %{db: db, clock: clock} do
      now = now(clock)
      assert {:ok, :scheduled} = Emqlite.enqueue_at(db, @q, @a, "x", now + 100)
      assert {:ok, :scheduled} = Emqlite.enqueue_in(db, @q, @b, "y", 200)
      assert {:ok, :duplicate} = Emqlite.enqueue_in(db, @q, @b, "y", 200)
      advance(clock, 200)
      assert {:ok, 2} = Emqlite.promote(db, @q, 10)
      assert {:ok, [@b, @a]} = Emqlite.browse(db, @q, 5)
      assert {:ok, 2} = Emqlite.pending_size(db, @q)
      {:ok, {@a, _, 1}} = Emqlite.claim(db, @q, 1000)
      assert {:ok, [@b]} = Emqlite.extend_locks(db, @q, 5000, [{@a, 1}, {@b, 1}])
    end

    test "interrupt/1 ends a long waiting claim at once", %{db: db} do
      me = self()
      waiter = spawn(fn -> send(me, {:waited, Emqlite.claim_wait(db, @q, 1000, 60_000)}) end)
      # Whether it lands during the wait or just before it, the interrupt
      # ends that wait.
      t0 = System.monotonic_time(:millisecond)
      assert :ok = Emqlite.interrupt(db)
      assert_receive {:waited, :empty}, 5_000
      assert System.monotonic_time(:millisecond) - t0 < 5_000
      refute Process.alive?(waiter)
    end

    test "payloads are binary-safe both ways, large ones too", %{db: db} do
      big = :rand.bytes(300_000)
      small = <<0, "a", 0, 255>>
      {:ok, :enqueued} = Emqlite.enqueue(db, @q, @a, [big])
      {:ok, :enqueued} = Emqlite.enqueue(db, @q, @b, small)
      assert {:ok, {@a, ^big, 1}} = Emqlite.claim(db, @q, 1000)
      assert {:ok, {@b, ^small, 1}} = Emqlite.claim(db, @q, 1000)
      assert {:ok, %{"payload" => ^big}} = Emqlite.get_job(db, @q, @a)
      # A large reply is backed by the library's buffer: still a plain binary.
      {:ok, %{"payload" => p}} = Emqlite.get_job(db, @q, @a)
      assert byte_size(p) == 300_000 and binary_part(p, 0, 10) == binary_part(big, 0, 10)
    end

    test "the waiting claim times out on a pinned fake clock and claims at once", %{db: db} do
      t0 = System.monotonic_time(:millisecond)
      assert :empty = Emqlite.claim_wait(db, @q, 1000, 50, slice: 20)
      assert System.monotonic_time(:millisecond) - t0 >= 50
      {:ok, :enqueued} = Emqlite.enqueue(db, @q, @a, "x")
      assert {:ok, {@a, "x", 1}} = Emqlite.claim_wait(db, @q, 1000, 5000)
    end
  end

  describe "tier 2: the operator and read plane" do
    test "pause, counts, drain, obliterate", %{db: db} do
      {:ok, :enqueued} = Emqlite.enqueue(db, @q, @a, "x")
      {:ok, :enqueued} = Emqlite.enqueue(db, @q, @b, "y")
      assert :ok = Emqlite.pause(db, @q)
      assert :empty = Emqlite.claim(db, @q, 1000)
      assert :ok = Emqlite.resume(db, @q)
      assert {:ok, %{"pending" => 2, "dead" => 0}} = Emqlite.counts(db, @q, ["pending", "dead"])
      assert {:error, {:refused, "unknown_state(wait)"}} = Emqlite.counts(db, @q, ["wait"])
      assert {:error, :not_paused} = Emqlite.obliterate(db, @q)
      {:ok, {@a, _, 1}} = Emqlite.claim(db, @q, 1000)
      :ok = Emqlite.pause(db, @q)
      assert {:error, :active} = Emqlite.obliterate(db, @q)
      assert {:ok, :more} = Emqlite.obliterate(db, @q, force: true, budget: 1)
      assert :ok = Emqlite.obliterate(db, @q, force: true)
      assert {:ok, 0} = Emqlite.drain(db, @q, true)
    end

    test "job data, progress, logs, removal and locks", %{db: db} do
      {:ok, :enqueued} = Emqlite.enqueue(db, @q, @a, "x")
      assert :ok = Emqlite.update_data(db, @q, @a, "new")
      assert {:error, :gone} = Emqlite.update_data(db, @q, @b, "new")
      assert :ok = Emqlite.update_progress(db, @q, @a, "50%")
      assert {:ok, 1} = Emqlite.add_log(db, @q, @a, "one")
      assert {:ok, 2} = Emqlite.add_log(db, @q, @a, "two")
      assert {:ok, 2} = Emqlite.add_log(db, @q, @a, "three", 2)
      assert {:ok, ["two", "three"]} = Emqlite.get_job_logs(db, @q, @a)
      assert {:error, :gone} = Emqlite.get_job_logs(db, @q, @b)
      {:ok, %{"row" => %{"payload" => "new", "progress" => "50%"}, "logs" => 2}} = Emqlite.job_info(db, @q, @a)
      {:ok, "OK"} = Emqlite.call(db, "lock_key_set", [@q, @a, 0, 60_000])
      assert {:error, :locked} = Emqlite.remove_job(db, @q, @a)
      {:ok, 1} = Emqlite.call(db, "lock_key_del", [@q, @a])
      assert :ok = Emqlite.remove_job(db, @q, @a)
      assert {:error, :gone} = Emqlite.remove_job(db, @q, @a)
      assert :absent = Emqlite.get_job(db, @q, @a)
      assert :absent = Emqlite.get_deduplication_job_id(db, @q, "d1")
    end

    test "claim_batch, delay, rate reads and the operator's lists", %{db: db, clock: clock} do
      {:ok, [:enqueued, :enqueued]} = Emqlite.enqueue_many(db, @q, [{@a, "a"}, {@b, "b"}])
      assert {:ok, [{@a, "a", 1}, {@b, "b", 1}]} = Emqlite.claim_batch(db, @q, 5, 1000)
      assert :empty = Emqlite.claim_batch(db, @q, 5, 1000)
      assert :ok = Emqlite.delay(db, @q, @a, 1, 100)
      assert {:error, {:stale, _}} = Emqlite.delay(db, @q, @b, 9, 100)
      assert {:error, :gone} = Emqlite.delay(db, @q, @c, 1, 100)
      assert {:ok, [{@a, at}]} = Emqlite.list_set(db, @q, "schedule")
      assert at == now(clock) + 100
      assert :ok = Emqlite.is_maxed(db, @q)
      assert {:ok, 0} = Emqlite.get_rate_limit_ttl(db, @q)
      assert {:ok, 0} = Emqlite.get_global_rate_limit(db, @q)
      assert {:ok, %{"active" => 1, "schedule" => 1}} = Emqlite.stats(db, @q)
    end
  end

  describe "tier 3: fair lanes" do
    test "lanes rotate between groups; limits, pauses, reassign, depth", %{db: db} do
      assert {:ok, :enqueued} = Emqlite.lane_enqueue(db, @q, @g, @a, "a")
      assert {:ok, :enqueued} = Emqlite.lane_enqueue(db, @q, @g, @b, "b")
      assert {:ok, :enqueued} = Emqlite.lane_enqueue(db, @q, @h, @c, "c")
      assert {:ok, :duplicate} = Emqlite.lane_enqueue(db, @q, @h, @c, "c")
      assert {:ok, %{@g => 2, @h => 1}} = Emqlite.lane_depths(db, @q, [@g, @h])
      assert {:ok, {2, [{@g, 2, false}, {@h, 1, false}]}} = Emqlite.lanes(db, @q)
      assert {:ok, :noop} = Emqlite.reassign(db, @q, @c, @h)
      assert {:ok, :reassigned} = Emqlite.reassign(db, @q, @b, @h)
      assert {:error, :not_found} = Emqlite.reassign(db, @q, "JOB0KHTOWnGLuZ", @h)
      {:ok, {id1, _, 1, g1}} = Emqlite.lane_claim(db, @q, 1000)
      {:ok, {id2, _, 1, g2}} = Emqlite.lane_claim(db, @q, 1000)
      assert g1 != g2
      assert {:error, :not_pending} = Emqlite.reassign(db, @q, id1, if(g1 == @g, do: @h, else: @g))
      assert :ok = Emqlite.complete(db, @q, id1, 1)
      assert :ok = Emqlite.complete(db, @q, id2, 1)
      assert :ok = Emqlite.weight(db, @q, @h, 5)
      assert :ok = Emqlite.limit(db, @q, @h, 10)
      assert :ok = Emqlite.lane_pause(db, @q, @h)
      assert :ok = Emqlite.lane_resume(db, @q, @h)
      assert {:ok, [{_, _, 1, @h}]} = Emqlite.wclaim(db, @q, 1000)
      assert {:ok, 0} = Emqlite.depth(db, @q, @h)
      assert {:ok, 0} = Emqlite.lane_drain(db, @q, @g)
      assert {:ok, 0} = Emqlite.reap_group(db, @q, @g)
      assert :empty = Emqlite.bclaim(db, @q, 1000)
    end
  end

  describe "tier 4: flows" do
    test "a parent is released when its children complete", %{db: db} do
      tree = %{id: @a, payload: "parent", children: [%{id: @b, payload: "b"}, %{id: @c, payload: "c"}]}
      assert {:ok, {@a, [@b, @c]}} = Emqlite.flow_add(db, @q, tree)
      assert {:ok, :awaiting_children} = Emqlite.get_job_state(db, @q, @a)
      assert {:ok, 2} = Emqlite.dependencies(db, @q, @a)
      {:ok, {@b, "b", 1}} = Emqlite.claim(db, @q, 1000)
      :ok = Emqlite.complete(db, @q, @b, 1, "result-b")
      {:ok, {@c, "c", 1}} = Emqlite.claim(db, @q, 1000)
      :ok = Emqlite.complete(db, @q, @c, 1)
      assert {:ok, %{@b => "result-b", @c => @c}} = Emqlite.children_values(db, @q, @a)
      assert {:ok, {@a, "parent", 1}} = Emqlite.claim(db, @q, 1000)
      assert {:ok, %{}} = Emqlite.ignored_failures(db, @q, @a)
      assert {:ok, [%{"id" => @a} | _]} = Emqlite.flow_tree(db, @q, @a)
      assert {:ok, 0} = Emqlite.flow_recover(db)
      assert {:ok, 0} = Emqlite.deliver_flow_completions(db, @q)
    end

    test "a cycle and a non-JOB id are refused, nothing written", %{db: db} do
      assert {:error, {:refused, "flow_cycle(" <> _}} =
               Emqlite.flow_add(db, @q, %{
                 id: @a,
                 payload: "p",
                 children: [%{id: @b, payload: "b", children: [%{id: @a, payload: "again"}]}]
               })

      assert {:error, :kind} = Emqlite.flow_add(db, @q, %{id: @a, payload: "p", children: [%{id: "USR0KHTOWnGLuC", payload: "c"}]})
      assert {:ok, []} = Emqlite.queues(db)
    end
  end

  describe "tier 5: scheduling, policies and streams" do
    test "repeats fire on the sweep; backoff; stalled", %{db: db, clock: clock} do
      assert {:ok, :registered} = Emqlite.repeat_register(db, @q, "tick", 1000, "tpl")
      assert {:ok, :exists} = Emqlite.repeat_register(db, @q, "tick", 1000, "tpl")
      assert {:ok, 1} = Emqlite.repeat_count(db, @q)
      assert {:ok, [{"tick", "1000", "tpl"}]} = Emqlite.repeat_due(db, @q, 10)
      assert {:ok, %{"fired" => 1}} = Emqlite.sweep(db, @q)
      assert {:ok, %{"fired" => 0}} = Emqlite.sweep(db, @q)
      advance(clock, 1000)
      assert {:ok, %{"fired" => 1}} = Emqlite.sweep(db, @q)
      assert {:ok, 2} = Emqlite.pending_size(db, @q)
      assert {:ok, :advanced} = Emqlite.repeat_advance(db, @q, "tick", 5000)
      assert {:ok, :cancelled} = Emqlite.repeat_cancel(db, @q, "tick")
      assert :absent = Emqlite.repeat_cancel(db, @q, "tick")
      assert {:ok, 400} = Emqlite.backoff(db, 3, "exponential:100:10000")
      assert {:ok, {[], []}} = Emqlite.stalled_check(db, @q)
    end

    test "retry policies per queue and per job", %{db: db} do
      assert :absent = Emqlite.get_policy(db, @q)
      assert :ok = Emqlite.set_policy(db, @q, 1, "fixed:0")
      assert {:ok, {1, "fixed:0"}} = Emqlite.get_policy(db, @q)
      assert {:error, {:invalid_argument, _}} = Emqlite.set_policy(db, @q, 1, "sometimes")
      {:ok, :enqueued} = Emqlite.enqueue(db, @q, @a, "x")
      {:ok, {@a, _, 1}} = Emqlite.claim(db, @q, 1000)
      assert {:ok, :dead} = Emqlite.retry_by_policy(db, @q, @a, 1, "boom")
      :ok = Emqlite.set_policy(db, @q, @b, 5, "fixed:10")
      {:ok, :enqueued} = Emqlite.enqueue(db, @q, @b, "y")
      {:ok, {@b, _, 1}} = Emqlite.claim(db, @q, 1000)
      assert {:ok, :scheduled} = Emqlite.retry_by_policy(db, @q, @b, 1, "boom")
      assert :ok = Emqlite.clear_policy(db, @q)
      assert :absent = Emqlite.get_policy(db, @q)
    end

    test "streams: append, read, groups, ack, trim, archive", %{db: db} do
      assert {:ok, "EVT" <> _ = id} = Emqlite.append(db, @q, "orders", [{"sku", "a1"}, {"n", "2"}])
      assert {:ok, [{^id, %{"sku" => "a1", "n" => "2"}}]} = Emqlite.read(db, @q, "orders")
      assert {:error, {:refused, "kind"}} = Emqlite.append_id(db, @q, "orders", "ORD000xY9Wvvcd", [{"a", "b"}])
      assert {:error, :nonmonotonic} = Emqlite.append_id(db, @q, "orders", "EVT000xY9Wvvcd", [{"a", "b"}])
      assert {:ok, 1} = Emqlite.stream_len(db, @q, "orders")
      assert :ok = Emqlite.group_create(db, @q, "orders", "billing", "0")
      assert {:error, {:engine, "BUSYGROUP" <> _}} = Emqlite.group_create(db, @q, "orders", "billing", "0")
      assert {:ok, [{xid, ["id", ^id, "sku", "a1", "n", "2"]}]} = Emqlite.group_read(db, @q, "orders", "billing", "c1")
      assert :empty = Emqlite.group_read(db, @q, "orders", "billing", "c1")
      assert {:ok, [{^xid, "c1", _idle, 1}]} = Emqlite.pending_range(db, @q, "orders", "billing")
      assert {:ok, {"0-0", [{^xid, _}], []}} = Emqlite.autoclaim(db, @q, "orders", "billing", "c2", 0)
      assert {:ok, 1} = Emqlite.ack(db, @q, "orders", "billing", [xid])
      assert {:ok, [{^xid, _}]} = Emqlite.stream_range(db, @q, "orders")
      assert {:ok, _} = Emqlite.read_since(db, @q, "orders", 0)
      assert {:error, {:refused, _}} = Emqlite.read_window(db, @q, "orders", 10, 5)
      assert {:ok, 1} = Emqlite.trim(db, @q, "orders", :maxlen, 0)
      assert :absent = Emqlite.get_archived(db, @q, "orders")
      assert :ok = Emqlite.put_archived(db, @q, "orders", "w1")
      assert {:ok, "w1"} = Emqlite.get_archived(db, @q, "orders")
      assert :ok = Emqlite.clear_archived(db, @q, "orders")
      assert :absent = Emqlite.clear_archived(db, @q, "orders")
    end
  end

  describe "handles, the registry and moving data" do
    test "every registry verb is listed and callable by name", %{db: db} do
      verbs = Emqlite.verbs()
      names = Enum.map(verbs, & &1.name)
      assert "enqueue" in names and "lane_claim" in names and "flow_add" in names and "append" in names
      assert length(names) == length(Enum.uniq(names))
      assert %{tier: 1, kind: :write, args: [{"q", false, false}, {"id", false, false}, {"payload", false, false}]} =
               Enum.find(verbs, &(&1.name == "enqueue"))

      assert {:ok, 1} = Emqlite.call(db, "enqueue", [@q, @a, "x"])
      assert {:ok, 0} = Emqlite.call(db, "enqueue", [@q, @a, "x"])
      assert {:error, :kind} = Emqlite.call(db, "enqueue", [@q, "USR0KHTOWnGLuC", "x"])
      assert {:error, {:invalid_argument, _}} = Emqlite.call(db, "no_such_verb", [])
    end

    test "a closed handle answers :closed; close is idempotent" do
      {:ok, db} = Emqlite.open(":memory:")
      assert :ok = Emqlite.close(db)
      assert :ok = Emqlite.close(db)
      assert {:error, {:closed, _}} = Emqlite.claim(db, @q, 1000)
      assert {:error, {:closed, _}} = Emqlite.mint(db)
    end

    test "a handle dropped without close is closed by its destructor", %{tmp: tmp} do
      path = Path.join(tmp, "gc.db")

      {pid, ref} =
        spawn_monitor(fn ->
          {:ok, db} = Emqlite.open(path, exclusive: true)
          {:ok, _} = Emqlite.mint(db)
        end)

      assert_receive {:DOWN, ^ref, :process, ^pid, :normal}, 10_000
      # An exclusive handle keeps every other open out until it is closed:
      # the collected resource's destructor closed it.
      :erlang.garbage_collect()
      assert eventually(fn -> match?({:ok, _}, Emqlite.open(path, exclusive: true)) end)
    end

    test "export, import and digest round-trip; the fence refuses another wire", %{db: db, tmp: tmp} do
      {:ok, :enqueued} = Emqlite.enqueue(db, @q, @a, "x")
      {:ok, bytes} = Emqlite.export(db)
      assert bytes =~ "echomq:4.0.0"
      {:ok, %{digest: d}} = Emqlite.digest(db)
      %{db: other} = Emqlite.Testing.open()
      assert {:ok, %{digest: ^d}} = Emqlite.import(other, bytes)
      assert {:ok, ^bytes} = Emqlite.export(other)
      assert {:ok, []} = Emqlite.check(other)
      path = Path.join(tmp, "foreign.db")
      File.write!(path, "not a database at all, not at all")
      assert {:error, {code, _}} = Emqlite.open(path)
      assert code in [:not_emqlite, :corrupt]
    end
  end

  setup do
    tmp = Path.join(System.tmp_dir!(), "emqlite-ex-#{System.unique_integer([:positive])}")
    File.mkdir_p!(tmp)
    on_exit(fn -> File.rm_rf!(tmp) end)
    %{tmp: tmp}
  end

  defp eventually(f, n \\ 50) do
    cond do
      f.() -> true
      n == 0 -> false
      true ->
        :erlang.garbage_collect()
        Process.sleep(20)
        eventually(f, n - 1)
    end
  end
end
