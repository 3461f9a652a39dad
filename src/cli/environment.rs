//! `--detect-env`: the machine's operating system, shell, home and working directory, for a
//! prompt used here and now. Never read otherwise, so committed outputs stay reproducible.

use crate::model::Context;

/// Fills `os`, `shell`, `home` and `cwd` from the process's environment; a value the
/// machine does not give leaves the context's.
pub fn detect(context: &mut Context) {
    context.os = os_name().to_string();
    let shell = if cfg!(windows) { "ComSpec" } else { "SHELL" };
    if let Some(shell) = variable(shell) {
        context.shell = shell;
    }
    let home = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    if let Some(home) = variable(home) {
        context.home = home;
    }
    if let Ok(cwd) = std::env::current_dir() {
        context.cwd = cwd.to_string_lossy().into_owned();
    }
}

fn variable(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

/// The operating system as people name it.
fn os_name() -> &'static str {
    match std::env::consts::OS {
        "linux" => "Linux",
        "macos" => "macOS",
        "windows" => "Windows",
        "freebsd" => "FreeBSD",
        other => other,
    }
}
