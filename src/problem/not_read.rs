//! Why a path in a folder of data files, named like one, is not read as one.

/// See [`super::Problem::NotReadAsData`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum NotRead {
    /// A folder named `<id>.toml` (or `.yaml`, `.yml`): the files inside it are read, its name
    /// is not (a submodule checked out at the path of a data file is such a folder).
    Folder,
    /// A `.json` file outside the contexts' folder.
    Json,
    /// A file whose extension is a data file's in another case (`.TOML`, `.Yaml`): promptc
    /// reads the lower-case ones alone, on every system alike.
    Case,
    /// More such paths under one folder than are named one by one.
    More { more: usize },
}
