// The allocator matters to a compile: see `mimalloc` in Cargo.toml.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    promptc::cli::main()
}
