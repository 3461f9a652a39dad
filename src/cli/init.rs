use std::path::{Path, PathBuf};

use clap::Args;

use super::{CliError, Message, Printer, load_valid, report_failures, source_date_epoch};
use crate::emit::matrix;
use crate::init::{InitError, init};

#[derive(Args, Debug)]
pub struct InitArgs {
    /// The folder of the new workspace (created if missing; default: the current one).
    pub dir: Option<PathBuf>,
}

/// Writes the library, then builds its outputs, so that `check` passes right away.
pub fn run(args: InitArgs, workspace: Option<&Path>, printer: &Printer) -> Result<(), CliError> {
    // `-C DIR init` names the folder too; the positional folder wins.
    let dir = args
        .dir
        .or_else(|| workspace.map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("."));
    match init(&dir) {
        Ok(written) => {
            // All or nothing: a build that fails (a full disk) takes the library back out,
            // so that `init` can run again once the cause is gone.
            let outputs = build(&dir, printer).inspect_err(|_| remove_library(&dir, &written))?;
            printer.message(Message::Initialised {
                files: written.len(),
                outputs,
                dir: &dir,
            });
            printer.message(Message::NextAfterInit(&dir));
            Ok(())
        }
        Err(InitError::WouldOverwrite(existing)) => Err(CliError::WouldOverwrite(existing)),
        // The folder named, or one below it, cannot take the library: the request is wrong,
        // as it is for a folder that holds the library's files already.
        Err(InitError::Refused(error)) => Err(CliError::Argument(error)),
        Err(InitError::InsideWorkspace { dir, enclosing }) => {
            Err(CliError::InsideWorkspace { dir, enclosing })
        }
    }
}

/// Builds the new workspace's outputs (none is written unless all are); how many there are.
fn build(dir: &Path, printer: &Printer) -> Result<usize, CliError> {
    let workspace = load_valid(Some(dir), printer)?;
    let run = matrix::compile_all(
        &crate::compile::Compiler::new(workspace),
        source_date_epoch(printer),
    );
    if report_failures(workspace, run.failed, printer) {
        return Err(CliError::Reported);
    }
    let built = matrix::write_all(workspace, &run.outputs)?;
    Ok(built.written.len() + built.unchanged.len())
}

/// Removes the library's files `init` wrote below `dir`, and the folders it made for them
/// that are empty again (`dir` itself stays).
fn remove_library(dir: &Path, written: &[PathBuf]) {
    for file in written {
        let _ = std::fs::remove_file(file);
    }
    let mut folders: Vec<&Path> = written
        .iter()
        .flat_map(|file| file.ancestors().skip(1))
        .filter(|folder| folder.starts_with(dir) && *folder != dir)
        .collect();
    // The deepest first, so that a folder is empty when its turn comes.
    folders.sort_by_key(|folder| std::cmp::Reverse(folder.components().count()));
    folders.dedup();
    for folder in folders {
        // Fails on a folder that holds anything else, which stays.
        let _ = std::fs::remove_dir(folder);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `init` wrote goes, with the folders it leaves empty; the folder named and
    /// anything else in it stay.
    #[test]
    fn a_failed_init_takes_back_the_library_it_wrote() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("new");
        let written: Vec<PathBuf> = ["promptc.toml", "components/a/b.md", "tools/t.toml"]
            .iter()
            .map(|relative| dir.join(relative))
            .collect();
        for file in &written {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, "x").unwrap();
        }
        let kept = dir.join("tools/notes.txt");
        std::fs::write(&kept, "mine").unwrap();
        remove_library(&dir, &written);
        assert!(written.iter().all(|file| !file.exists()));
        assert!(!dir.join("components").exists());
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), "mine");
        assert!(dir.is_dir());
    }
}
