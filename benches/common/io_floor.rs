//! The I/O floor that `benches/pipeline.rs` measures promptc against, built by that bench with
//! `rustc` alone: a process with nothing but the standard library, as lean as a C program
//! that does the same, so that the floor carries none of promptc's own start-up (its
//! allocator, its size) and a ratio to it is what the work costs above the bytes moved.
//!
//! `io_floor PLAN MODE`: PLAN lists input paths, then `>` and output paths. `read` reads every
//! input; `compare` also reads every output and compares it byte for byte with a buffer of
//! its length; `write` reads the inputs and writes each output (its bytes taken from the file
//! already there) to a temporary file beside it, synced, then renamed over it, as
//! `build --all` does.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let [_, plan, mode] = &args[..] else {
        eprintln!("usage: io_floor PLAN read|compare|write");
        return ExitCode::from(2);
    };
    match run(Path::new(plan), mode) {
        Ok(total) => {
            std::hint::black_box(total);
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("io_floor: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(plan: &Path, mode: &str) -> std::io::Result<usize> {
    let plan = std::fs::read_to_string(plan)?;
    let mut total = 0;
    for line in plan.lines() {
        let Some(output) = line.strip_prefix('>') else {
            total += std::fs::read(line)?.len();
            continue;
        };
        let output = Path::new(output);
        match mode {
            "compare" => {
                let bytes = std::fs::read(output)?;
                total += usize::from(bytes == vec![b'x'; bytes.len()]);
            }
            "write" => {
                let bytes = std::fs::read(output)?;
                let mut name = output.file_name().unwrap_or_default().to_os_string();
                name.push(".floor-tmp");
                let temporary = output.with_file_name(name);
                let mut file = std::fs::File::create(&temporary)?;
                file.write_all(&bytes)?;
                file.sync_all()?;
                std::fs::rename(&temporary, output)?;
            }
            _ => {}
        }
    }
    Ok(total)
}
