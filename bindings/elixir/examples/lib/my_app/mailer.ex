defmodule MyApp.Mailer do
  @moduledoc """
  An example application module (not part of the library): it queues
  welcome mails in emqlite and sends them from an `Emqlite.Worker`. The
  "SMTP server" is an Agent so the example test can make it fail.
  `examples/mailer_test.exs` tests it with `Emqlite.Testing`.
  """
  use Emqlite.Worker

  @queue "mail"

  @doc "The queue the mails wait in."
  @spec queue() :: String.t()
  def queue, do: @queue

  @doc "Queue a welcome mail to `address`; returns the job id."
  @spec welcome(Emqlite.db(), String.t()) :: {:ok, Emqlite.id()}
  def welcome(db, address) do
    {:ok, id} = Emqlite.mint(db)
    {:ok, :enqueued} = Emqlite.enqueue(db, @queue, id, "welcome:" <> address)
    {:ok, id}
  end

  @doc "Configure retries: 3 attempts, exponential backoff from 1 s up to 60 s."
  @spec setup(Emqlite.db()) :: :ok
  def setup(db), do: Emqlite.set_policy(db, @queue, 3, "exponential:1000:60000")

  @impl true
  def perform({_id, "welcome:" <> address, _attempts}) do
    case MyApp.SMTP.deliver(address) do
      :ok -> :ok
      {:error, why} -> {:error, "smtp: #{why}"}
    end
  end
end

defmodule MyApp.SMTP do
  @moduledoc "A stand-in mail server: an Agent holding the sent mails and the failures to come."
  use Agent

  @doc false
  def start_link(failures), do: Agent.start_link(fn -> %{sent: [], fail: failures} end, name: __MODULE__)

  @doc "Send one mail, or fail while failures are queued."
  @spec deliver(String.t()) :: :ok | {:error, String.t()}
  def deliver(address) do
    Agent.get_and_update(__MODULE__, fn
      %{fail: [why | rest]} = s -> {{:error, why}, %{s | fail: rest}}
      s -> {:ok, %{s | sent: [address | s.sent]}}
    end)
  end

  @doc "The addresses mailed so far, oldest first."
  @spec sent() :: [String.t()]
  def sent, do: Agent.get(__MODULE__, &Enum.reverse(&1.sent))
end
