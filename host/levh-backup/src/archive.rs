//! The backup file's bytes: a tar stream, written plain or through age encryption, and
//! read back the same way.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;

use age::DecryptError;
use sha2::{Digest, Sha256};

use crate::{BackupError, Passphrase};

/// How every age file begins (`age-encryption.org/v1`); a tar file never does.
const AGE_MAGIC: &[u8] = b"age-encryption.org/";

/// Whether the file at `path` is encrypted (an age file).
pub fn is_encrypted(path: &Path) -> Result<bool, BackupError> {
    let file = File::open(path).map_err(BackupError::io("reading the backup", path))?;
    let mut head = Vec::with_capacity(AGE_MAGIC.len());
    file.take(AGE_MAGIC.len() as u64)
        .read_to_end(&mut head)
        .map_err(BackupError::io("reading the backup", path))?;
    Ok(head == AGE_MAGIC)
}

/// Where a backup's tar stream is written.
pub(crate) enum Sink {
    Plain(BufWriter<File>),
    Encrypted(age::stream::StreamWriter<BufWriter<File>>),
}

impl Sink {
    pub(crate) fn new(file: File, passphrase: Option<&Passphrase>) -> io::Result<Self> {
        let out = BufWriter::with_capacity(1 << 20, file);
        let Some(passphrase) = passphrase else {
            return Ok(Self::Plain(out));
        };
        let mut recipient = age::scrypt::Recipient::new(passphrase.secret.clone());
        if let Some(log_n) = passphrase.work_factor {
            recipient.set_work_factor(log_n);
        }
        let encryptor =
            age::Encryptor::with_recipients(std::iter::once(&recipient as &dyn age::Recipient))
                .map_err(io::Error::other)?;
        Ok(Self::Encrypted(encryptor.wrap_output(out)?))
    }

    /// Writes what is left (age's last chunk) and hands back the file, flushed.
    pub(crate) fn finish(self) -> io::Result<File> {
        let out = match self {
            Self::Plain(out) => out,
            Self::Encrypted(writer) => writer.finish()?,
        };
        out.into_inner().map_err(io::IntoInnerError::into_error)
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Self::Plain(out) => out.write(buf),
            Self::Encrypted(writer) => writer.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Self::Plain(out) => out.flush(),
            Self::Encrypted(writer) => writer.flush(),
        }
    }
}

/// The tar stream of the backup at `path`, decrypted when it is an age file.
pub(crate) fn open(
    path: &Path,
    passphrase: Option<&Passphrase>,
) -> Result<Box<dyn Read>, BackupError> {
    let encrypted = is_encrypted(path)?;
    let file = File::open(path).map_err(BackupError::io("reading the backup", path))?;
    let input = BufReader::with_capacity(1 << 20, file);
    if !encrypted {
        return Ok(Box::new(input));
    }
    let Some(passphrase) = passphrase else {
        return Err(BackupError::PassphraseNeeded {
            path: path.to_path_buf(),
        });
    };
    let decryptor = age::Decryptor::new_buffered(input).map_err(|e| {
        BackupError::not_a_backup(path, format!("its encryption header is unreadable ({e})"))
    })?;
    if !decryptor.is_scrypt() {
        return Err(BackupError::not_a_backup(
            path,
            "it is encrypted to age recipients, not with a passphrase as levh's backups are",
        ));
    }
    let identity = age::scrypt::Identity::new(passphrase.secret.clone());
    match decryptor.decrypt(std::iter::once(&identity as &dyn age::Identity)) {
        Ok(reader) => Ok(Box::new(reader)),
        Err(DecryptError::DecryptionFailed | DecryptError::NoMatchingKeys) => {
            Err(BackupError::WrongPassphrase {
                path: path.to_path_buf(),
            })
        }
        Err(e) => Err(BackupError::not_a_backup(path, e.to_string())),
    }
}

/// A reader that hashes what passes through it.
pub(crate) struct Hashing<R> {
    pub(crate) inner: R,
    pub(crate) hasher: Sha256,
    pub(crate) bytes: u64,
}

impl<R> Hashing<R> {
    pub(crate) fn new(inner: R) -> Self {
        Self {
            inner,
            hasher: Sha256::new(),
            bytes: 0,
        }
    }

    pub(crate) fn hex(self) -> String {
        self.hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
}
