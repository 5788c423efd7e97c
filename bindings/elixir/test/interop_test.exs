defmodule EmqliteInteropTest do
  # The binding against the C library's own tool and across OS processes.
  use ExUnit.Case, async: false

  @q "xq"
  @t0 1_767_225_600_000
  @id1 "JOB0KHTOWnGLuC"
  @id2 "JOB0KHTOWnGLuD"
  @id3 "JOB0KHTOWnGLuE"

  setup do
    tmp = Path.join(System.tmp_dir!(), "emqlite-interop-#{System.unique_integer([:positive])}")
    File.mkdir_p!(tmp)
    on_exit(fn -> File.rm_rf!(tmp) end)
    %{tmp: tmp}
  end

  # The built `emqlite` tool, named by EMQLITE_CLI (tests/elixir.sh sets it).
  defp cli do
    tool = System.get_env("EMQLITE_CLI")
    if tool && File.exists?(tool), do: tool
  end

  defp run_cli(tool, db, now, args) do
    {out, 0} = System.cmd(tool, ["--db", db | args], env: [{"EMQLITE_NOW_MS", Integer.to_string(now)}], stderr_to_stdout: true)
    out
  end

  test "a file written from Elixir exports byte-identical to the same calls through the C tool", %{tmp: tmp} do
    case cli() do
      nil ->
        IO.puts("\n  skipped: EMQLITE_CLI does not name a built emqlite tool (tests/elixir.sh sets it)")

      tool ->
        cdb = Path.join(tmp, "c.db")
        run_cli(tool, cdb, @t0, ["enqueue", @q, "one", "--id", @id1])
        run_cli(tool, cdb, @t0, ["enqueue", @q, "two", "--id", @id2])
        run_cli(tool, cdb, @t0, ["enqueue", @q, "three", "--id", @id3, "--in", "5000"])
        run_cli(tool, cdb, @t0 + 1, ["claim", @q, "--lease", "10000"])
        run_cli(tool, cdb, @t0 + 2, ["retry", @q, @id1, "1", "--delay", "100", "--max", "3", "--error", "boom"])
        run_cli(tool, cdb, @t0 + 3, ["claim", @q, "--lease", "10000"])
        run_cli(tool, cdb, @t0 + 4, ["complete", @q, @id2, "1"])
        cexp = Path.join(tmp, "c.resp")
        run_cli(tool, cdb, @t0 + 5, ["export", "--out", cexp])

        clock = Emqlite.Testing.clock(@t0)
        {:ok, db} = Emqlite.open(Path.join(tmp, "ex.db"), clock: clock)
        {:ok, :enqueued} = Emqlite.enqueue(db, @q, @id1, "one")
        {:ok, :enqueued} = Emqlite.enqueue(db, @q, @id2, "two")
        {:ok, :scheduled} = Emqlite.enqueue_in(db, @q, @id3, "three", 5000)
        Emqlite.Testing.set(clock, @t0 + 1)
        {:ok, {@id1, "one", 1}} = Emqlite.claim(db, @q, 10_000)
        Emqlite.Testing.set(clock, @t0 + 2)
        {:ok, :scheduled} = Emqlite.retry(db, @q, @id1, 1, 100, 3, "boom")
        Emqlite.Testing.set(clock, @t0 + 3)
        {:ok, {@id2, "two", 1}} = Emqlite.claim(db, @q, 10_000)
        Emqlite.Testing.set(clock, @t0 + 4)
        :ok = Emqlite.complete(db, @q, @id2, 1)
        {:ok, exp} = Emqlite.export(db)
        Emqlite.close(db)

        assert exp == File.read!(cexp)
        assert exp =~ "boom"
    end
  end

  test "an Elixir worker processes jobs the C tool enqueued", %{tmp: tmp} do
    case cli() do
      nil ->
        IO.puts("\n  skipped: EMQLITE_CLI does not name a built emqlite tool")

      tool ->
        path = Path.join(tmp, "cli.db")
        for i <- 1..5, do: run_cli(tool, path, System.os_time(:millisecond), ["enqueue", "mail", "hello #{i}"])

        defmodule Printer do
          use Emqlite.Worker
          @impl true
          def perform({_id, "hello " <> _, 1}), do: :ok
        end

        start_supervised!({Printer, path: path, queue: "mail", concurrency: 2, notify: self(), slice: 50})
        got =
          for _ <- 1..5 do
            assert_receive {:emqlite_worker, :completed, {_, payload, 1}}, 10_000
            payload
          end

        assert Enum.sort(got) == for(i <- 1..5, do: "hello #{i}")
        assert run_cli(tool, path, System.os_time(:millisecond), ["stats", "mail"]) =~ "5"
    end
  end

  @tag timeout: 600_000
  test "a soak: thousands of jobs across OS processes, each completed exactly once", %{tmp: tmp} do
    n = String.to_integer(System.get_env("EMQLITE_EX_SOAK", "3000"))
    procs = 3
    path = Path.join(tmp, "soak.db")
    {:ok, db} = Emqlite.open(path)
    :ok = Emqlite.set_policy(db, "soak", 3, "fixed:0")

    ids =
      1..n
      |> Enum.chunk_every(500)
      |> Enum.flat_map(fn chunk ->
        items = for i <- chunk, do: {elem(Emqlite.mint(db), 1), if(rem(i, 10) == 0, do: "flaky", else: "job #{i}")}
        {:ok, v} = Emqlite.enqueue_many(db, "soak", items)
        assert Enum.all?(v, &(&1 == :enqueued))
        Enum.map(items, &elem(&1, 0))
      end)

    elixir = System.find_executable("elixir")
    ebin = Path.join(:code.lib_dir(:emqlite), "ebin")
    script = Path.join(__DIR__, "soak_child.exs")

    ports =
      for k <- 1..procs do
        out = Path.join(tmp, "done-#{k}")

        port =
          Port.open({:spawn_executable, elixir}, [
            :binary,
            :exit_status,
            :stderr_to_stdout,
            args: ["-pa", ebin, script, path, out]
          ])

        {port, out}
      end

    for {port, _} <- ports do
      assert_receive {^port, {:exit_status, 0}}, 540_000
    end

    done = Enum.flat_map(ports, fn {_, out} -> String.split(File.read!(out), "\n", trim: true) end)
    assert length(done) == n, "completions: #{length(done)} of #{n}"
    assert Enum.sort(done) == Enum.sort(ids)
    per_proc = Enum.map(ports, fn {_, out} -> length(String.split(File.read!(out), "\n", trim: true)) end)
    IO.puts("\n  soak: #{n} jobs (#{div(n, 10)} flaky) completed once each across #{procs} OS processes: #{inspect(per_proc)}")
    assert {:ok, %{"completed" => ^n, "dead" => 0, "pending" => 0, "active" => 0}} = Emqlite.stats(db, "soak")
    assert {:ok, []} = Emqlite.check(db)
    Emqlite.close(db)
  end
end
