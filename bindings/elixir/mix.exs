# The Mix compiler that builds the NIF: it runs `make` in this folder, which
# compiles priv/emqlite_nif.so from the tree's C sources (see Makefile). It
# lives here because the project's compilers must exist before lib/ is
# compiled; no Hex package (elixir_make) is needed.
defmodule Mix.Tasks.Compile.EmqliteNif do
  use Mix.Task.Compiler

  @shortdoc "Builds priv/emqlite_nif.so from the emqlite C sources"

  @impl true
  def run(_args) do
    erts = Path.join([:code.root_dir(), "erts-#{:erlang.system_info(:version)}", "include"])
    make = System.find_executable("make") || Mix.raise("emqlite: `make` is not installed")

    env = [
      {"ERTS_INCLUDE_DIR", erts},
      {"OBJ_DIR", Path.join(Mix.Project.build_path(), "emqlite_c")},
      {"PRIV_DIR", Path.join(File.cwd!(), "priv")}
    ]

    jobs = System.get_env("EMQLITE_MAKE_JOBS", "2")

    case System.cmd(make, ["-s", "-j#{jobs}"], env: env, stderr_to_stdout: true) do
      {out, 0} ->
        if out != "", do: Mix.shell().info(out)
        # Mix links priv/ into the build path before the compilers run; on
        # a first build priv/ did not exist yet, so link it now.
        Mix.Project.build_structure()
        {:ok, []}

      {out, rc} ->
        Mix.shell().error(out)
        Mix.raise("emqlite: building the NIF failed (make exited #{rc})")
    end
  end

  @impl true
  def clean do
    System.cmd("make", ["-s", "clean", "OBJ_DIR=" <> Path.join(Mix.Project.build_path(), "emqlite_c")])
    :ok
  end
end

defmodule Emqlite.MixProject do
  use Mix.Project

  def project do
    [
      app: :emqlite,
      version: "0.1.0",
      elixir: "~> 1.14",
      compilers: [:emqlite_nif] ++ Mix.compilers(),
      start_permanent: Mix.env() == :prod,
      deps: [],
      elixirc_paths: elixirc_paths(Mix.env()),
      test_paths: ["test", "examples"],
      elixirc_options: [warnings_as_errors: true],
      test_coverage: [summary: false],
      description: "The EchoMQ job-queue protocol as an embedded engine over one SQLite file",
      package: [licenses: ["MIT"], files: ~w(lib c_src Makefile mix.exs README.md)]
    ]
  end

  defp elixirc_paths(:test), do: ["lib", "examples/lib"]
  defp elixirc_paths(_), do: ["lib"]

  def application do
    [extra_applications: [:logger]]
  end
end
