fn main() -> std::process::ExitCode {
    promptc::cli::main()
}
