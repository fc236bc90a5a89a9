//! The `carapi` binary: see the `carapi_cli` library.

fn main() -> std::process::ExitCode {
    carapi_cli::main()
}
