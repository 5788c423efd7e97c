defmodule MyApp.MailerTest do
  # An application's test with Emqlite.Testing: an in-memory database on a
  # fake clock, so the retry and its backoff are checked without sleeping.
  use ExUnit.Case, async: false
  use Emqlite.Testing

  setup %{db: db} do
    :ok = MyApp.Mailer.setup(db)
    :ok
  end

  test "a welcome mail is sent once", %{db: db} do
    start_supervised!({MyApp.SMTP, []})
    {:ok, id} = MyApp.Mailer.welcome(db, "ada@example.com")
    assert %{completed: 1} = perform_all(db, MyApp.Mailer.queue(), MyApp.Mailer)
    assert MyApp.SMTP.sent() == ["ada@example.com"]
    assert {:ok, :absent} = Emqlite.get_job_state(db, "mail", id)
  end

  test "a refused mail is retried after its backoff, then sent", %{db: db, clock: clock} do
    start_supervised!({MyApp.SMTP, ["421 try later"]})
    {:ok, id} = MyApp.Mailer.welcome(db, "grace@example.com")

    assert %{retried: 1} = perform_all(db, "mail", MyApp.Mailer)
    assert {:ok, %{"last_error" => "smtp: 421 try later"}} = Emqlite.get_job(db, "mail", id)
    # The backoff is 1 s after the first attempt: not yet due at 999 ms.
    advance(clock, 999)
    assert %{completed: 0} = perform_all(db, "mail", MyApp.Mailer)
    advance(clock, 1)
    assert %{completed: 1} = perform_all(db, "mail", MyApp.Mailer)
    assert MyApp.SMTP.sent() == ["grace@example.com"]
  end

  test "a mail that keeps failing is dead after three attempts", %{db: db, clock: clock} do
    start_supervised!({MyApp.SMTP, ["550 no such user", "550 no such user", "550 no such user"]})
    {:ok, id} = MyApp.Mailer.welcome(db, "nobody@example.com")
    assert %{retried: 1} = perform_all(db, "mail", MyApp.Mailer)
    advance(clock, 1_000)
    assert %{retried: 1} = perform_all(db, "mail", MyApp.Mailer)
    advance(clock, 2_000)
    assert %{dead: 1} = perform_all(db, "mail", MyApp.Mailer)
    assert {:ok, :dead} = Emqlite.get_job_state(db, "mail", id)
    assert {:ok, %{"dead" => 1, "failed" => 1}} = Emqlite.counts(db, "mail", ["dead", "failed"])
  end
end
