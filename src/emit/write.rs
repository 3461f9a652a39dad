//! Writing outputs atomically: a reader (or a crash) never sees a half-written file.

use std::io::{self, Write};
use std::path::Path;

/// Writes `contents` to a temporary file beside `path`, then renames it into place. Errors
/// name the path.
pub fn write_atomic(path: &Path, contents: &[u8]) -> io::Result<()> {
    replace(path, contents)
        .map_err(|error| io::Error::new(error.kind(), format!("{}: {error}", path.display())))
}

fn replace(path: &Path, contents: &[u8]) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    // A temporary file is private (0600); the output keeps the permissions of the file it
    // replaces, or gets the usual 0644.
    if let Some(permissions) = std::fs::metadata(path)
        .map(|m| m.permissions())
        .ok()
        .or_else(default_permissions)
    {
        file.as_file().set_permissions(permissions)?;
    }
    file.write_all(contents)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|error| error.error)?;
    Ok(())
}

#[cfg(unix)]
fn default_permissions() -> Option<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Some(std::fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn default_permissions() -> Option<std::fs::Permissions> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out/a.md");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        let entries = std::fs::read_dir(dir.path().join("out")).unwrap().count();
        assert_eq!(entries, 1);
    }

    #[cfg(unix)]
    #[test]
    fn outputs_are_readable_and_keep_the_mode_they_had() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.md");
        write_atomic(&path, b"one").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o644);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o664)).unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(mode(&path), 0o664);
    }
}
