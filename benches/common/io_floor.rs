//! The I/O floor that `benches/pipeline.rs` measures promptc against, built by that bench with
//! `rustc` alone: a process with nothing but the standard library (within about half a
//! millisecond of a C program that does the same), so that the floor carries none of
//! promptc's own start-up (its allocator, its size) and a ratio to it is what the work costs
//! above the bytes moved.
//!
//! `io_floor PLAN MODE`: PLAN lists input paths, then `>` and output paths. `read` reads every
//! input; `compare` also reads every output and compares all its bytes, as promptc compares an
//! output that did not change; `write` reads the inputs and writes each output to a temporary
//! file beside it, synced, then renamed over it, as `build --all` does. The bytes it writes
//! are the output's own, read from the file first: a read from the page cache that promptc
//! does not make, so this floor is a little high.

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
                // Equal slices are compared to their last byte, as promptc's equal outputs are.
                total += usize::from(std::hint::black_box(&bytes[..]) == &bytes[..]);
            }
            "write" => {
                let bytes = std::fs::read(output)?;
                let mut name = output.file_name().unwrap_or_default().to_os_string();
                name.push(".floor-tmp");
                let temporary = output.with_file_name(name);
                if let Err(error) = replace(&temporary, output, &bytes) {
                    let _ = std::fs::remove_file(&temporary);
                    return Err(error);
                }
            }
            _ => {}
        }
    }
    Ok(total)
}

fn replace(temporary: &Path, output: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::File::create(temporary)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(temporary, output)
}
