//! Report folders: create a directory and write named text files into it, with IO errors that
//! name the path. Shared by every reproduction study and the CLI.

use std::path::{Path, PathBuf};

use circumflex_core::error::{Error, Result};

/// A created output directory.
#[derive(Clone, Debug)]
pub struct OutDir {
    path: PathBuf,
}

impl OutDir {
    /// Creates `path` (and its parents) if needed.
    pub fn create(path: &Path) -> Result<OutDir> {
        std::fs::create_dir_all(path).map_err(|e| Error::io(path, &e))?;
        Ok(OutDir { path: path.to_path_buf() })
    }

    /// Writes `text` to the file `name` inside the directory.
    pub fn write(&self, name: &str, text: &str) -> Result<()> {
        let path = self.path.join(name);
        std::fs::write(&path, text).map_err(|e| Error::io(&path, &e))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_files_and_names_the_path_on_error() {
        let dir = std::env::temp_dir().join(format!("circumflex-outdir-{}", std::process::id()));
        let out = OutDir::create(&dir.join("nested")).unwrap();
        out.write("a.txt", "hello").unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("nested/a.txt")).unwrap(), "hello");
        let err = out.write("missing/b.txt", "x").unwrap_err().to_string();
        assert!(err.contains("missing/b.txt"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
