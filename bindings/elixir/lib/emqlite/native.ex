defmodule Emqlite.Native do
  @moduledoc false
  # The NIF (c_src/emqlite_nif.c). Every function that touches the file runs
  # on a dirty I/O scheduler; results are raw ({code, reply} or
  # {:error, code, message}) and Emqlite shapes them.
  @on_load :load

  def load do
    path = Path.join(:code.priv_dir(:emqlite), "emqlite_nif")
    :erlang.load_nif(String.to_charlist(path), 0)
  end

  defp nif, do: :erlang.nif_error(:emqlite_nif_not_loaded)

  def nif_version, do: nif()
  def nif_verbs, do: nif()
  def nif_clock_new(_start), do: nif()
  def nif_clock_move(_clock, _value, _set), do: nif()
  def nif_clock_now(_clock), do: nif()
  def nif_interrupt(_db), do: nif()
  def nif_open(_path, _clock, _opts), do: nif()
  def nif_close(_db), do: nif()
  def nif_call(_db, _verb, _args), do: nif()
  def nif_claim_wait(_db, _q, _lease, _timeout), do: nif()
  def nif_retry_by_policy(_db, _q, _id, _token, _error, _max, _spec), do: nif()
  def nif_policy_set(_db, _q, _id, _max, _spec), do: nif()
  def nif_policy_get(_db, _q, _id), do: nif()
  def nif_export(_db, _queues, _by_slot, _digest), do: nif()
  def nif_import(_db, _bytes), do: nif()
  def nif_mint(_db, _ns), do: nif()
  def nif_info(_db, _what), do: nif()
  def nif_check(_db), do: nif()
  def nif_history(_db, _q, _id), do: nif()
  def nif_history_level(_db, _level), do: nif()
end
