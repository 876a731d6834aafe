//! Paths an LLM names, checked before anything touches the disk. A name is relative to a
//! session directory, made only of plain components (no `..`, no root, no drive, no NUL),
//! and nothing on its way may be a symlink, so it cannot lead outside, whatever the
//! directory holds. The memory file tools (spec 001 US-4b, US-6, US-7) use it with the
//! additional rule that names start with `working-memory/`.

use crate::fsio;
use std::path::{Component, Path, PathBuf};

/// The part of a session the LLM may read and write.
pub const MEMORY_DIR: &str = "working-memory";

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PathError {
    #[error("{0:?} is refused: paths must be relative to the session directory, without `..`")]
    Escapes(String),
    #[error("{0:?} is refused: memory files live under working-memory/ (overview.md, detail/, archive/)")]
    OutsideMemory(String),
    #[error("{0:?} is refused: it goes through a symlink, and symlinks are not followed")]
    Symlink(String),
    #[error("{name:?}: {message}")]
    Io { name: String, kind: std::io::ErrorKind, message: String },
}

/// A directory that names are confined to.
#[derive(Debug, Clone)]
pub struct Confined {
    root: PathBuf,
}

impl Confined {
    pub fn new(root: &Path) -> Self {
        Confined { root: root.to_path_buf() }
    }

    /// The file `name` stands for, after every check.
    pub fn resolve(&self, name: &str) -> Result<PathBuf, PathError> {
        let escapes = || PathError::Escapes(name.to_string());
        if name.is_empty() || name.contains('\0') || name.contains('\\') {
            return Err(escapes());
        }
        let mut path = self.root.clone();
        for component in Path::new(name).components() {
            match component {
                Component::Normal(part) => path.push(part),
                Component::CurDir => {}
                Component::ParentDir | Component::RootDir | Component::Prefix(_) => return Err(escapes()),
            }
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(PathError::Symlink(name.to_string()));
            }
        }
        if path == self.root {
            return Err(escapes());
        }
        Ok(path)
    }

    pub fn read(&self, name: &str) -> Result<String, PathError> {
        let path = self.resolve(name)?;
        std::fs::read_to_string(&path).map_err(|e| io(name, e))
    }

    /// Replaces the file atomically, creating its folders (all inside the root, as checked).
    pub fn write(&self, name: &str, content: &str) -> Result<(), PathError> {
        let path = self.resolve(name)?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(name, e))?;
        }
        fsio::write_atomic(&path, content.as_bytes()).map_err(|e| io(name, e))
    }

    /// Appends one record in a single write, creating the file (and its folders) if needed.
    pub fn append(&self, name: &str, content: &str) -> Result<(), PathError> {
        let path = self.resolve(name)?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(name, e))?;
        }
        fsio::append(&path, content.as_bytes()).map_err(|e| io(name, e))
    }

    /// The files under folder `name`, as names that `read` accepts, sorted.
    pub fn list(&self, name: &str) -> Result<Vec<String>, PathError> {
        let dir = self.resolve(name)?;
        let mut out = Vec::new();
        let mut stack = vec![dir];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).map_err(|e| io(name, e))?.flatten() {
                let kind = entry.file_type().map_err(|e| io(name, e))?;
                let rel = entry.path().strip_prefix(&self.root).expect("under the root").to_string_lossy().into_owned();
                if kind.is_dir() {
                    stack.push(entry.path());
                } else if kind.is_file() {
                    out.push(rel);
                }
            }
        }
        out.sort();
        Ok(out)
    }
}

fn io(name: &str, e: std::io::Error) -> PathError {
    PathError::Io { name: name.to_string(), kind: e.kind(), message: e.to_string() }
}

/// The memory file tools: `Confined` to the session directory, and only `working-memory/`.
#[derive(Debug, Clone)]
pub struct MemoryFiles {
    session: Confined,
}

impl MemoryFiles {
    pub fn new(session_dir: &Path) -> Self {
        MemoryFiles { session: Confined::new(session_dir) }
    }

    fn check(&self, name: &str) -> Result<(), PathError> {
        let first = Path::new(name).components().find(|c| *c != Component::CurDir);
        match first {
            Some(Component::Normal(part)) if part == MEMORY_DIR => Ok(()),
            Some(Component::Normal(_)) => Err(PathError::OutsideMemory(name.to_string())),
            _ => Err(PathError::Escapes(name.to_string())),
        }
    }

    pub fn read(&self, name: &str) -> Result<String, PathError> {
        self.check(name)?;
        self.session.read(name)
    }

    pub fn write(&self, name: &str, content: &str) -> Result<(), PathError> {
        self.check(name)?;
        self.session.write(name, content)
    }

    /// Files under `name` (default `working-memory`).
    pub fn list(&self, name: &str) -> Result<Vec<String>, PathError> {
        self.check(name)?;
        self.session.list(name)
    }
}
