//! Reading inputs from and writing results to files: NumPy `.npy` (via `npyz`) and raw
//! little-endian binary.
//!
//! Reading checks everything before any GPU work: the magic and header, that the dtype is one of
//! the element types, that the array is one-dimensional and in C order, and that the data is
//! complete, and sizes come from the header (or the file's length) so that a run is planned and
//! its memory checked before the data is read. Every file the command line writes (results,
//! CSVs, plots, reports) goes to a temporary file in the destination's folder that is renamed
//! into place only once it is complete, so an error or interruption never leaves a truncated
//! output behind, and an existing file is replaced only when asked to (`--force`).

use gpu_scan::{ElemType, Element, Error, Result};
use npyz::WriterBuilder;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// An element type that NumPy files hold.
pub trait FileElement: Element + npyz::Deserialize + npyz::AutoSerialize {}

impl<T: Element + npyz::Deserialize + npyz::AutoSerialize> FileElement for T {}

// Files hold their elements little-endian, and are read and written as the elements' bytes.
const _: () = assert!(cfg!(target_endian = "little"), "files are read as the host's bytes: a little-endian host");

/// The bytes of `v`, as files hold them (little-endian, as this host).
pub fn as_bytes<T: FileElement>(v: &[T]) -> &[u8] {
    // SAFETY: every element type is plain data (integers and floats, no padding); the bytes are
    // only read.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
}

/// The bytes of `v` to read a file's elements into.
pub fn as_bytes_mut<T: FileElement>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: as above, and every element type is valid for any bits read into it.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), std::mem::size_of_val(v)) }
}

/// How a file holds its elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// NumPy `.npy`: the element type comes from the file.
    Npy,
    /// Raw little-endian elements; the element type must be given.
    Raw,
}

impl Format {
    /// `.npy` files are NumPy arrays; anything else is raw binary.
    pub fn of(path: &Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("npy") => Format::Npy,
            _ => Format::Raw,
        }
    }
}

/// The NumPy type string of an element type (little-endian).
pub fn npy_dtype(ty: ElemType) -> &'static str {
    match ty {
        ElemType::U8 => "|u1",
        ElemType::U16 => "<u2",
        ElemType::U32 => "<u4",
        ElemType::I32 => "<i4",
        ElemType::U64 => "<u8",
        ElemType::I64 => "<i8",
        ElemType::F32 => "<f4",
        ElemType::F64 => "<f8",
    }
}

/// The element type of a NumPy type string, either byte order.
fn elem_type_of(dtype: &str) -> Option<ElemType> {
    let body = dtype.trim_start_matches(['<', '>', '|', '=']);
    ElemType::ALL.into_iter().find(|t| &npy_dtype(*t)[1..] == body)
}

pub fn bad(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::invalid(format!("{}: {what}", path.display()))
}

/// The header of the `.npy` file at `path`.
pub fn header_of(path: &Path) -> Result<npyz::NpyHeader> {
    let file = std::fs::File::open(path).map_err(|e| bad(path, format!("cannot open: {e}")))?;
    npyz::NpyHeader::from_reader(BufReader::new(file)).map_err(|e| bad(path, format!("not a valid .npy file: {e}")))
}

/// The plain dtype of `header` (`<u4`), or an error for a structured one.
fn plain_dtype(path: &Path, header: &npyz::NpyHeader) -> Result<npyz::TypeStr> {
    match header.dtype() {
        npyz::DType::Plain(t) => Ok(t),
        other => Err(bad(path, format!("structured dtype {other:?} is not supported; store a plain array"))),
    }
}

/// The element type of a C-ordered array of `ndim` dimensions (1 or 2) that `header` describes.
fn check_header(path: &Path, header: &npyz::NpyHeader, ndim: usize) -> Result<ElemType> {
    let dtype = plain_dtype(path, header)?.to_string();
    let ty = elem_type_of(&dtype).ok_or_else(|| {
        let supported: Vec<&str> = ElemType::ALL.iter().map(|t| npy_dtype(*t)).collect();
        bad(path, format!("dtype {dtype} is not supported; supported: {}", supported.join(" ")))
    })?;
    check_layout(path, header, ndim)?;
    Ok(ty)
}

/// An error unless `header` describes a C-ordered array of `ndim` dimensions (1 or 2).
pub fn check_layout(path: &Path, header: &npyz::NpyHeader, ndim: usize) -> Result<()> {
    if header.shape().len() != ndim {
        let why = match ndim {
            1 => "is not one-dimensional; flatten it first (numpy: a.ravel())",
            _ => "is not two-dimensional; give a (rows, columns) matrix (numpy: a.reshape(rows, -1))",
        };
        return Err(bad(path, format!("shape {:?} {why}", header.shape())));
    }
    if header.order() == npyz::Order::Fortran {
        return Err(bad(path, "Fortran order is not supported; save a C-ordered array (numpy: np.ascontiguousarray)"));
    }
    Ok(())
}

/// An error unless the `.npy` file at `path` stores its elements little-endian (single bytes have
/// no order): for readers that take the data's bytes as they are rather than through `npyz`.
pub fn check_little_endian(path: &Path, header: &npyz::NpyHeader) -> Result<()> {
    if !little_endian(path, header)? {
        return Err(bad(
            path,
            "big-endian data is not supported; save it little-endian (numpy: a.astype('<' + a.dtype.str[1:]))",
        ));
    }
    Ok(())
}

/// Whether the `.npy` file at `path` stores its elements little-endian (single bytes have no order).
fn little_endian(path: &Path, header: &npyz::NpyHeader) -> Result<bool> {
    let dtype = plain_dtype(path, header)?;
    Ok(dtype.endianness() != npyz::Endianness::Big || dtype.size_field() <= 1)
}

/// The shape in `header` of the `.npy` file at `path` (of `file_len` bytes), unless its data is
/// shorter than the shape's elements of `size` bytes.
pub fn checked_shape(path: &Path, header: &npyz::NpyHeader, size: u64, file_len: u64) -> Result<Vec<u64>> {
    let shape = header.shape().to_vec();
    let n = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
    let data = npy_data_bytes(path, file_len)?;
    if n.and_then(|n| n.checked_mul(size)).is_none_or(|b| b > data) {
        let n = n.map_or_else(|| format!("{shape:?}"), |n| n.to_string());
        return Err(bad(path, format!("truncated: the header promises {n} elements, the file holds {data} bytes")));
    }
    Ok(shape)
}

/// The number of `ty` elements in `path` (a `.npy` file's header, or a raw file's size), without
/// reading the data: what a run is planned and checked with before anything is allocated.
pub fn input_len(path: &Path, ty: ElemType) -> Result<u64> {
    Ok(input_shape(path, ty, 1)?[0])
}

/// The shape of the `ndim`-dimensional array of `ty` in `path`, from a `.npy` file's header (a
/// raw file is one-dimensional, its length from its size), the data's presence checked.
pub fn input_shape(path: &Path, ty: ElemType, ndim: usize) -> Result<Vec<u64>> {
    let file_len = file_len(path)?;
    let size = ty.size() as u64;
    match Format::of(path) {
        Format::Npy => {
            let header = header_of(path)?;
            check_header(path, &header, ndim)?;
            checked_shape(path, &header, size, file_len)
        }
        Format::Raw if ndim != 1 => Err(bad(path, "a raw file has no shape; give a .npy file")),
        Format::Raw => {
            if file_len % size != 0 {
                return Err(bad(
                    path,
                    format!("{file_len} bytes is not a whole number of {size}-byte {} elements", ty.name()),
                ));
            }
            Ok(vec![file_len / size])
        }
    }
}

/// The bytes after the header of the `.npy` file at `path` (of `file_len` bytes): its data.
pub fn npy_data_bytes(path: &Path, file_len: u64) -> Result<u64> {
    let mut start = [0u8; 12];
    let mut file = std::fs::File::open(path).map_err(|e| bad(path, format!("cannot open: {e}")))?;
    file.read_exact(&mut start).map_err(|e| bad(path, format!("not a valid .npy file: {e}")))?;
    // Version 1 has a 2-byte header length after the magic and version; later versions 4 bytes.
    let header = match start[6] {
        1 => 10 + u16::from_le_bytes([start[8], start[9]]) as u64,
        _ => 12 + u32::from_le_bytes([start[8], start[9], start[10], start[11]]) as u64,
    };
    Ok(file_len.saturating_sub(header))
}

/// The size of the file at `path`, which must be a file.
pub fn file_len(path: &Path) -> Result<u64> {
    let meta = std::fs::metadata(path).map_err(|e| bad(path, format!("cannot open: {e}")))?;
    if meta.is_dir() {
        return Err(bad(path, "is a folder; give a .npy or raw file"));
    }
    Ok(meta.len())
}

/// Reads the elements of `path` as `T`: a `.npy` file must hold `T`'s dtype; a raw file must be
/// a whole number of elements. The memory is allocated fallibly, once.
pub fn read<T: FileElement>(path: &Path) -> Result<Vec<T>> {
    read_shaped(path, 1)
}

/// Seconds spent reading input files in this process, which a run reports beside its GPU time.
static READING: Mutex<f64> = Mutex::new(0.0);

/// Counts `started`'s time to now as time spent reading input files.
pub fn count_reading(started: Instant) {
    *READING.lock().unwrap_or_else(|e| e.into_inner()) += started.elapsed().as_secs_f64();
}

/// Seconds spent reading input files so far (0 when none were read).
pub fn reading_seconds() -> f64 {
    *READING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Reads the elements of the `ndim`-dimensional array of `T` in `path`, in C order (a raw file,
/// which has no shape, as its elements are: the caller checked their number).
pub fn read_shaped<T: FileElement>(path: &Path, ndim: usize) -> Result<Vec<T>> {
    let started = Instant::now();
    let v = read_shaped_untimed(path, ndim);
    count_reading(started);
    v
}

fn read_shaped_untimed<T: FileElement>(path: &Path, ndim: usize) -> Result<Vec<T>> {
    let n: u64 = match Format::of(path) {
        Format::Npy => input_shape(path, T::TYPE, ndim)?.iter().product(),
        Format::Raw => input_len(path, T::TYPE)?,
    };
    let len = usize::try_from(n).map_err(|_| bad(path, "holds more elements than this machine can address"))?;
    let mut v = crate::memory::with_capacity::<T>(len, &path.display().to_string())?;
    match Format::of(path) {
        Format::Npy => {
            let file = std::fs::File::open(path).map_err(|e| bad(path, format!("cannot open: {e}")))?;
            let npy = npyz::NpyFile::new(BufReader::new(file))
                .map_err(|e| bad(path, format!("not a valid .npy file: {e}")))?;
            let ty = check_header(path, npy.header(), ndim)?;
            if ty != T::TYPE {
                return Err(bad(path, format!("holds {}, not {}", ty.name(), T::TYPE.name())));
            }
            if little_endian(path, npy.header())? {
                read_bytes(path, npy.into_inner(), &mut v, len)?;
            } else {
                let data = npy.data::<T>().map_err(|e| bad(path, format!("unreadable data: {e}")))?;
                for x in data {
                    v.push(x.map_err(|e| bad(path, format!("truncated or unreadable data: {e}")))?);
                }
                if v.len() != len {
                    return Err(bad(
                        path,
                        format!("truncated: the header promises {n} elements, the file holds {}", v.len()),
                    ));
                }
            }
        }
        Format::Raw => {
            let file = std::fs::File::open(path).map_err(|e| bad(path, format!("cannot open: {e}")))?;
            read_bytes(path, file, &mut v, len)?;
        }
    }
    Ok(v)
}

/// Reads `len` little-endian elements from `from` into the empty `v` as their bytes, in one
/// pass (element by element, a reader takes several times as long as the disk).
fn read_bytes<T: FileElement>(path: &Path, mut from: impl Read, v: &mut Vec<T>, len: usize) -> Result<()> {
    v.resize(len, T::zero());
    from.read_exact(as_bytes_mut(v)).map_err(|e| bad(path, format!("truncated or unreadable data: {e}")))
}

/// Fails unless a file may be written at `path`: its folder exists and, without `force`, nothing
/// is there.
pub fn check_writable(path: &Path, force: bool) -> Result<()> {
    check_target(path, force)?;
    let dir = folder_of(path);
    if !dir.is_dir() {
        return Err(bad(path, format!("folder {} does not exist", dir.display())));
    }
    probe(path, dir)
}

/// Fails unless a file may be written at `path`, its folder created where missing: without
/// `force` nothing is there, and the nearest folder that exists takes new files.
pub fn check_creatable(path: &Path, force: bool) -> Result<()> {
    check_target(path, force)?;
    let mut dir = folder_of(path);
    while !dir.exists() && folder_of(dir) != dir {
        dir = folder_of(dir);
    }
    if !dir.is_dir() {
        return Err(bad(path, format!("{} is not a folder", dir.display())));
    }
    probe(path, dir)
}

/// Fails unless a line can be appended to `path`: a file there that opens for appending, or a
/// new file in a folder that exists.
pub fn check_appendable(path: &Path) -> Result<()> {
    if path.is_dir() {
        return Err(bad(path, "is a folder; name a file"));
    }
    if path.exists() {
        return std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map(drop)
            .map_err(|e| bad(path, format!("cannot append to it: {e}")));
    }
    let dir = folder_of(path);
    if !dir.is_dir() {
        return Err(bad(path, format!("folder {} does not exist", dir.display())));
    }
    probe(path, dir)
}

/// No file at `path` unless `force`, and never a folder.
fn check_target(path: &Path, force: bool) -> Result<()> {
    if path.is_dir() {
        return Err(bad(path, "is a folder; name a file"));
    }
    if path.exists() && !force {
        return Err(bad(path, "exists; pass --force to replace it"));
    }
    Ok(())
}

/// An error unless `dir` takes new files (an unnamed file is made there and dropped).
fn probe(path: &Path, dir: &Path) -> Result<()> {
    tempfile::tempfile_in(dir).map(drop).map_err(|e| bad(path, format!("cannot write in {}: {e}", dir.display())))
}

fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Writes a file at `path` as `write` writes it to the path it is given: a temporary file in the
/// destination's folder (created where missing), with the same extension, renamed into place
/// once complete and on disk. An existing file is replaced only with `force`; on any error or
/// interrupt (see [`remove_temporaries_on_interrupt`]) nothing is left behind.
pub fn write_file(path: &Path, force: bool, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    check_target(path, force)?;
    let dir = folder_of(path);
    std::fs::create_dir_all(dir).map_err(|e| bad(path, format!("cannot create folder {}: {e}", dir.display())))?;
    let suffix = path.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
    let tmp =
        LIVE.create(dir, &suffix).map_err(|e| bad(path, format!("cannot create a temporary file beside it: {e}")))?;
    write(tmp.path())?;
    let io = |e: std::io::Error| bad(path, format!("cannot write: {e}"));
    std::fs::File::open(tmp.path()).and_then(|f| f.sync_all()).map_err(io)?;
    tmp.persist(path, force).map_err(|e| match force {
        true => io(e),
        false => bad(path, format!("cannot create it: {e}")),
    })
}

/// The exit status after an interrupt: SIGINT's (128 + 2), whichever signal it was.
pub const INTERRUPTED: i32 = 130;

/// The temporary files of the outputs being written now.
static LIVE: Registry = Registry::new();

/// Has SIGINT, SIGTERM and SIGHUP remove the temporary files of outputs being written, say so in
/// one line on stderr and exit with [`INTERRUPTED`]: left to the signal, the process would end
/// without dropping them.
pub fn remove_temporaries_on_interrupt() -> std::result::Result<(), ctrlc::Error> {
    ctrlc::set_handler(|| {
        LIVE.remove_all(|removed| {
            // Not `eprintln!`, which panics when stderr is gone and would leave the process running.
            let _ = writeln!(std::io::stderr(), "{}", interrupted(removed));
            std::process::exit(INTERRUPTED)
        })
    })
}

/// The line an interrupt prints, naming the files it removed (or failed to).
fn interrupted(removed: &[(PathBuf, std::io::Result<()>)]) -> String {
    let each: Vec<String> = removed
        .iter()
        .map(|(p, r)| match r {
            Ok(()) => format!("removed {}", p.display()),
            Err(e) => format!("cannot remove {}: {e}", p.display()),
        })
        .collect();
    match each.is_empty() {
        true => "interrupted".into(),
        false => format!("interrupted: {}", each.join(", ")),
    }
}

/// The temporary files that exist now. A file is added under the lock as it is created and taken
/// out under the lock as it is renamed into place or removed, and an interrupt removes them
/// holding the lock until the process exits: so it never misses one, and never removes one that
/// has become an output.
struct Registry(Mutex<Vec<PathBuf>>);

impl Registry {
    const fn new() -> Registry {
        Registry(Mutex::new(Vec::new()))
    }

    fn lock(&self) -> MutexGuard<'_, Vec<PathBuf>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new temporary file `.gpu-scan-*<suffix>` in `dir`, registered.
    fn create(&'static self, dir: &Path, suffix: &str) -> std::io::Result<TempOutput> {
        let mut live = self.lock();
        let file = tempfile::Builder::new().prefix(".gpu-scan-").suffix(suffix).tempfile_in(dir)?;
        live.push(file.path().to_path_buf());
        Ok(TempOutput { file: Some(file), registry: self })
    }

    /// Removes every registered file, then calls `then` with each one's path and outcome while
    /// still holding the lock, so that no file is created or renamed into place until it returns
    /// (the interrupt exits there).
    fn remove_all<R>(&self, then: impl FnOnce(&[(PathBuf, std::io::Result<()>)]) -> R) -> R {
        let mut live = self.lock();
        let removed: Vec<_> = live
            .drain(..)
            .map(|p| {
                let removed = std::fs::remove_file(&p);
                (p, removed)
            })
            .collect();
        then(&removed)
    }
}

/// A registered temporary file, removed when dropped unless renamed into place.
struct TempOutput {
    /// Present until renamed into place.
    file: Option<tempfile::NamedTempFile>,
    registry: &'static Registry,
}

impl TempOutput {
    fn path(&self) -> &Path {
        self.file.as_ref().map_or(Path::new(""), |f| f.path())
    }

    /// Renames the file to `path`, replacing a file there only with `force`, and unregisters it,
    /// under the registry's lock. A file that cannot be renamed is removed.
    fn persist(mut self, path: &Path, force: bool) -> std::io::Result<()> {
        let Some(file) = self.file.take() else { return Ok(()) };
        let mut live = self.registry.lock();
        let tmp = file.path().to_path_buf();
        let persisted = match force {
            true => file.persist(path),
            false => file.persist_noclobber(path),
        };
        // A failed rename hands the file back; dropping it with the error removes it.
        let persisted = persisted.map(drop).map_err(|e| e.error);
        live.retain(|p| *p != tmp);
        persisted
    }
}

impl Drop for TempOutput {
    fn drop(&mut self) {
        if let Some(file) = self.file.take() {
            let mut live = self.registry.lock();
            live.retain(|p| p != file.path());
            // Removed before the lock is released, so an interrupt cannot exit between the two.
            drop(file);
        }
    }
}

/// Writes `text` to `path` as [`write_file`] does.
pub fn write_text(path: &Path, force: bool, text: &str) -> Result<()> {
    write_file(path, force, |tmp| std::fs::write(tmp, text).map_err(|e| bad(path, format!("cannot write: {e}"))))
}

/// Writes `data` to `path` (format from the extension) as [`write_file`] does, into an existing
/// folder.
pub fn write<T: FileElement>(path: &Path, data: &[T], force: bool) -> Result<()> {
    write_shaped(path, data, &[data.len() as u64], force)
}

/// Writes `data`, an array of `shape` in C order, as [`write`] does (a raw file keeps only the
/// elements).
pub fn write_shaped<T: FileElement>(path: &Path, data: &[T], shape: &[u64], force: bool) -> Result<()> {
    check_writable(path, force)?;
    write_file(path, force, |tmp| {
        let io = |e: std::io::Error| bad(path, format!("cannot write: {e}"));
        let mut w = std::io::BufWriter::new(std::fs::File::create(tmp).map_err(io)?);
        match Format::of(path) {
            // The header (npyz's default dtype of `T`: little-endian), then the elements' bytes.
            Format::Npy => {
                npyz::WriteOptions::<T>::new()
                    .default_dtype()
                    .shape(shape)
                    .writer(&mut w)
                    .write_header_only()
                    .map_err(io)?;
            }
            Format::Raw => {}
        }
        w.write_all(as_bytes(data)).map_err(io)?;
        w.flush().map_err(io)
    })
}

/// The element type to scan `path` as: a `.npy` file's own, which must agree with `requested`
/// when given; a raw file needs `requested`.
pub fn input_type(path: &Path, requested: Option<ElemType>) -> Result<ElemType> {
    input_type_nd(path, requested, 1)
}

/// [`input_type`] of an `ndim`-dimensional array.
pub fn input_type_nd(path: &Path, requested: Option<ElemType>, ndim: usize) -> Result<ElemType> {
    file_len(path)?;
    match Format::of(path) {
        Format::Npy => {
            let ty = check_header(path, &header_of(path)?, ndim)?;
            match requested {
                Some(r) if r != ty => Err(bad(path, format!("holds {}, but --type {} was given", ty.name(), r.name()))),
                _ => Ok(ty),
            }
        }
        Format::Raw => requested.ok_or_else(|| bad(path, "raw binary input needs --type (or use a .npy file)")),
    }
}

/// The element type of the `ndim`-dimensional input `path` of `command`, which must be one of
/// `allowed`: a `.npy` file's own (agreeing with `requested` when given), a raw file's
/// `requested`.
pub fn input_of(
    path: &Path,
    requested: Option<ElemType>,
    allowed: &[ElemType],
    command: &str,
    ndim: usize,
) -> Result<ElemType> {
    let ty = input_type_nd(path, requested, ndim)?;
    if !allowed.contains(&ty) {
        let names: Vec<&str> = allowed.iter().map(|t| t.name()).collect();
        return Err(bad(path, format!("holds {}, but {command} takes {}", ty.name(), names.join(" "))));
    }
    Ok(ty)
}

/// The element type (one of `allowed`, agreeing with `requested` when given) and the shape of the
/// matrix in `path` for `command`: a `.npy` file's two-dimensional array, or an empty
/// one-dimensional one (NumPy's `np.array([])`), which has no rows to scan either way; a raw
/// file's elements as the `[rows, cols]` of `dims`, which it must hold exactly.
pub fn matrix_of(
    path: &Path,
    requested: Option<ElemType>,
    allowed: &[ElemType],
    command: &str,
    dims: Option<[u64; 2]>,
) -> Result<(ElemType, Vec<u64>)> {
    if Format::of(path) == Format::Raw {
        let ty = input_of(path, requested, allowed, command, 1)?;
        let [rows, cols] =
            dims.ok_or_else(|| bad(path, "a raw file has no shape: give ROWS and COLS, or a .npy file"))?;
        let n = input_len(path, ty)?;
        if rows.checked_mul(cols) != Some(n) {
            return Err(bad(path, format!("holds {n} {} elements, not ROWS x COLS = {rows} x {cols}", ty.name())));
        }
        return Ok((ty, vec![rows, cols]));
    }
    let empty_vector = Format::of(path) == Format::Npy
        && file_len(path).is_ok()
        && header_of(path).is_ok_and(|h| h.shape() == [0] && h.order() == npyz::Order::C);
    let ndim = if empty_vector { 1 } else { 2 };
    let ty = input_of(path, requested, allowed, command, ndim)?;
    Ok((ty, input_shape(path, ty, ndim)?))
}

/// The element type of a second input of `flag` (values, row indices, the recurrence's offsets)
/// that takes the one type in `allowed`: a `.npy` file's own, which must be it; a raw file is
/// read as it.
pub fn side_type(path: &Path, flag: &str, allowed: &[ElemType]) -> Result<ElemType> {
    side_type_of(path, flag, allowed, None)
}

/// [`side_type`] of an input whose type an option (`type_flag`, its value `requested`) chooses:
/// a `.npy` file's own must agree with it when given; a raw file needs it where `allowed` holds
/// more than one type.
pub fn side_type_of(
    path: &Path,
    flag: &str,
    allowed: &[ElemType],
    chosen: Option<(&str, Option<ElemType>)>,
) -> Result<ElemType> {
    let names: Vec<&str> = allowed.iter().map(|t| t.name()).collect();
    let (type_flag, requested) = chosen.unwrap_or(("", None));
    let ty = match Format::of(path) {
        Format::Npy => input_type(path, None)?,
        Format::Raw => {
            let only = if let [t] = allowed { Some(*t) } else { None };
            let needed = || bad(path, format!("a raw {flag} file needs {type_flag} (or use a .npy file)"));
            input_type(path, Some(requested.or(only).ok_or_else(needed)?))?
        }
    };
    if !allowed.contains(&ty) {
        return Err(bad(path, format!("holds {}, but {flag} takes {}", ty.name(), names.join(" "))));
    }
    if let Some(r) = requested.filter(|&r| r != ty) {
        return Err(bad(path, format!("holds {}, but {type_flag} {} was given", ty.name(), r.name())));
    }
    Ok(ty)
}

/// An error unless the input `path` of `flag` holds `len` elements of `ty`, as the input does.
pub fn check_same_len(path: &Path, flag: &str, ty: ElemType, len: u64) -> Result<()> {
    same_len(path, flag, input_len(path, ty)?, len)
}

fn same_len(path: &Path, flag: &str, n: u64, len: u64) -> Result<()> {
    if n != len {
        return Err(bad(path, format!("{flag} holds {n} values, but the input has {len}")));
    }
    Ok(())
}

/// Whether the `.npy` file at `path` holds NumPy booleans (`|b1`, what `np.save(x > 3)` writes):
/// bytes of 0 or 1, which flags and heads take as they take u8.
fn holds_bools(path: &Path) -> Result<bool> {
    if Format::of(path) == Format::Raw {
        return Ok(false);
    }
    file_len(path)?;
    let dtype = plain_dtype(path, &header_of(path)?)?;
    Ok(dtype.type_char() == npyz::TypeChar::Bool && dtype.size_field() == 1)
}

/// An error unless the flags (or head flags) file `path` of `flag` holds `len` bytes, one per
/// element of the input: a `.npy` file of uint8 or bool, or raw bytes.
pub fn check_flags(path: &Path, flag: &str, len: u64) -> Result<()> {
    let bools = holds_bools(path)?;
    let ty = match Format::of(path) {
        Format::Npy if !bools => input_type(path, None)?,
        _ => ElemType::U8,
    };
    if ty != ElemType::U8 {
        return Err(bad(path, format!("holds {}, but {flag} takes u8 or bool", ty.name())));
    }
    let n = match bools {
        true => {
            let header = header_of(path)?;
            check_layout(path, &header, 1)?;
            checked_shape(path, &header, 1, file_len(path)?)?[0]
        }
        false => input_len(path, ElemType::U8)?,
    };
    same_len(path, flag, n, len)
}

/// Reads the flags file `path` (checked by [`check_flags`]) as bytes; a bool file must hold only
/// 0 and 1.
pub fn read_flags(path: &Path) -> Result<Vec<u8>> {
    if !holds_bools(path)? {
        return read::<u8>(path);
    }
    let started = Instant::now();
    let flags = read_npy_bytes(path).and_then(|v| check_bools(path, 0, &v).map(|()| v));
    count_reading(started);
    flags
}

/// The data of the one-dimensional `.npy` file of single bytes at `path`, as they are stored.
fn read_npy_bytes(path: &Path) -> Result<Vec<u8>> {
    let header = header_of(path)?;
    let n = checked_shape(path, &header, 1, file_len(path)?)?[0];
    let len = usize::try_from(n).map_err(|_| bad(path, "holds more elements than this machine can address"))?;
    let mut v = crate::memory::with_capacity::<u8>(len, &path.display().to_string())?;
    let file = std::fs::File::open(path).map_err(|e| bad(path, format!("cannot open: {e}")))?;
    let npy = npyz::NpyFile::new(BufReader::new(file)).map_err(|e| bad(path, format!("not a valid .npy file: {e}")))?;
    npy.into_inner()
        .take(n)
        .read_to_end(&mut v)
        .map_err(|e| bad(path, format!("truncated or unreadable data: {e}")))?;
    if v.len() != len {
        return Err(bad(path, format!("truncated: the header promises {n} elements, the file holds {}", v.len())));
    }
    Ok(v)
}

/// An error naming the first of `bytes` (elements `first..` of `path`) that is not a bool: 0 or 1.
pub fn check_bools(path: &Path, first: usize, bytes: &[u8]) -> Result<()> {
    match bytes.iter().position(|&b| b > 1) {
        Some(i) => Err(bad(path, format!("element {} is {}, not a bool (0 or 1)", first + i, bytes[i]))),
        None => Ok(()),
    }
}

/// An output file of a run, and how to write it to the (temporary) path it is given.
pub type Output<'a> = (&'a Path, Box<dyn FnOnce(&Path) -> Result<()> + 'a>);

/// Writes every output of a run once it passed, saying so and how long it took; a failed run
/// writes none.
pub fn write_outputs<'a>(passed: bool, outputs: Vec<Output<'a>>) -> Result<()> {
    for (path, write) in outputs {
        if passed {
            let started = Instant::now();
            write(path)?;
            crate::out::outln!("wrote {} in {:.2} s", path.display(), started.elapsed().as_secs_f64());
        } else {
            crate::out::outln!("{} not written: the result failed its check", path.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_scan::with_elem_type;

    fn dir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn npy_and_raw_round_trip_every_type() {
        let d = dir();
        for ty in ElemType::ALL {
            with_elem_type!(ty, T => {
                let data = gpu_scan::input::generate::<T>(gpu_scan::Op::Add, 3, 1000);
                for name in ["a.npy", "a.bin"] {
                    let p = d.path().join(format!("{}-{name}", ty.name()));
                    write::<T>(&p, &data, false).unwrap();
                    assert_eq!(read::<T>(&p).unwrap(), data, "{}", p.display());
                }
                let p = d.path().join(format!("{}-a.npy", ty.name()));
                assert_eq!(input_type(&p, None).unwrap(), ty);
            });
        }
    }

    #[test]
    fn never_overwrites_without_force_and_leaves_no_temporary_files() {
        let d = dir();
        let p = d.path().join("out.npy");
        write::<u32>(&p, &[1, 2, 3], false).unwrap();
        let e = write::<u32>(&p, &[4], false).unwrap_err().to_string();
        assert!(e.contains("exists; pass --force"), "{e}");
        assert_eq!(read::<u32>(&p).unwrap(), [1, 2, 3]);
        write::<u32>(&p, &[4], true).unwrap();
        assert_eq!(read::<u32>(&p).unwrap(), [4]);
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "{names:?}");
        let missing = d.path().join("no/such/folder/out.npy");
        assert!(write::<u32>(&missing, &[1], false).unwrap_err().to_string().contains("does not exist"));
    }

    #[test]
    fn outputs_go_into_new_folders_and_a_failed_write_leaves_nothing() {
        let d = dir();
        let p = d.path().join("a/b/plot.png");
        check_creatable(&p, false).unwrap();
        assert!(!d.path().join("a").exists(), "a check creates nothing");
        let e = write_file(&p, false, |tmp| {
            std::fs::write(tmp, b"half a plot").unwrap();
            Err(Error::invalid("drawing failed"))
        })
        .unwrap_err();
        assert!(e.to_string().contains("drawing failed"), "{e}");
        assert_eq!(std::fs::read_dir(d.path().join("a/b")).unwrap().count(), 0, "a partial file was left");
        write_text(&p, false, "done").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "done");
        assert!(write_text(&p, false, "again").unwrap_err().to_string().contains("exists; pass --force"));
        assert!(check_creatable(&p, false).unwrap_err().to_string().contains("exists; pass --force"));
        write_text(&p, true, "again").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "again");
        assert_eq!(std::fs::read_dir(d.path().join("a/b")).unwrap().count(), 1);
        let file = d.path().join("f");
        std::fs::write(&file, b"").unwrap();
        assert!(check_creatable(&file.join("x.png"), false).unwrap_err().to_string().contains("is not a folder"));
        assert!(check_writable(d.path(), true).unwrap_err().to_string().contains("is a folder"));
        assert!(check_writable(&d.path().join("no/x.csv"), false).unwrap_err().to_string().contains("does not exist"));
    }

    /// The registered paths of `registry`.
    fn live(registry: &Registry) -> Vec<PathBuf> {
        registry.lock().clone()
    }

    #[test]
    fn temporary_files_are_registered_until_renamed_or_dropped() {
        static REGISTRY: Registry = Registry::new();
        let d = dir();
        let tmp = REGISTRY.create(d.path(), ".npy").unwrap();
        let name = tmp.path().file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with(".gpu-scan-") && name.ends_with(".npy"), "{name}");
        assert_eq!(live(&REGISTRY), [tmp.path()]);
        let out = d.path().join("out.npy");
        tmp.persist(&out, false).unwrap();
        assert!(out.exists() && live(&REGISTRY).is_empty());
        let tmp = REGISTRY.create(d.path(), "").unwrap();
        let e = tmp.persist(&out, false).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists, "{e}");
        assert!(live(&REGISTRY).is_empty());
        let tmp = REGISTRY.create(d.path(), "").unwrap();
        let path = tmp.path().to_path_buf();
        drop(tmp);
        assert!(!path.exists() && live(&REGISTRY).is_empty());
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1, "only the output is left");
    }

    #[test]
    fn an_interrupt_removes_the_temporary_files_and_never_an_output() {
        static REGISTRY: Registry = Registry::new();
        let d = dir();
        let done = REGISTRY.create(d.path(), ".csv").unwrap();
        let out = d.path().join("done.csv");
        done.persist(&out, false).unwrap();
        let (a, b) = (REGISTRY.create(d.path(), ".npy").unwrap(), REGISTRY.create(d.path(), ".png").unwrap());
        std::fs::write(a.path(), b"half a result").unwrap();
        let (line, removed): (String, Vec<PathBuf>) =
            REGISTRY.remove_all(|r| (interrupted(r), r.iter().map(|(p, _)| p.clone()).collect()));
        assert_eq!(removed, [a.path(), b.path()]);
        assert!(!a.path().exists() && !b.path().exists() && out.exists());
        assert_eq!(line, format!("interrupted: removed {}, removed {}", a.path().display(), b.path().display()));
        // A file the interrupt removed is never renamed into place afterwards.
        let late = d.path().join("late.npy");
        assert!(a.persist(&late, true).is_err() && !late.exists());
        drop(b);
        assert_eq!(REGISTRY.remove_all(interrupted), "interrupted");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1, "only the finished output is left");
    }

    #[test]
    fn the_interrupt_line_names_files_it_could_not_remove() {
        let gone = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let line = interrupted(&[("a.npy".into(), Ok(())), ("b.npy".into(), Err(gone))]);
        assert!(line.starts_with("interrupted: removed a.npy, cannot remove b.npy: "), "{line}");
    }

    #[test]
    fn records_append_to_files_in_existing_folders() {
        let d = dir();
        check_appendable(&d.path().join("new.csv")).unwrap();
        let old = d.path().join("old.csv");
        std::fs::write(&old, b"title\n").unwrap();
        check_appendable(&old).unwrap();
        assert!(check_appendable(&d.path().join("no/x.csv")).unwrap_err().to_string().contains("does not exist"));
        assert!(check_appendable(d.path()).unwrap_err().to_string().contains("is a folder"));
    }

    #[test]
    fn a_header_promising_more_than_the_file_holds_is_refused_before_anything_is_allocated() {
        let d = dir();
        let p = d.path().join("huge.npy");
        std::fs::write(&p, npy_bytes("<u8", false, "(1000000000000000,)", &[0; 64])).unwrap();
        let e = input_len(&p, ElemType::U64).unwrap_err().to_string();
        assert!(e.contains("truncated: the header promises 1000000000000000 elements"), "{e}");
        assert!(read::<u64>(&p).unwrap_err().to_string().contains("truncated"));
        let raw = d.path().join("x.bin");
        std::fs::write(&raw, [1u8, 0, 0, 0, 2, 0, 0, 0]).unwrap();
        assert_eq!(input_len(&raw, ElemType::U32).unwrap(), 2);
        assert_eq!(read::<u32>(&raw).unwrap(), [1, 2]);
    }

    /// A valid .npy header for `dtype` and `shape`, as NumPy writes it (version 1.0).
    fn npy_bytes(dtype: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
        let mut header = format!(
            "{{'descr': '{dtype}', 'fortran_order': {}, 'shape': {shape}, }}",
            if fortran { "True" } else { "False" }
        );
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        let mut v = b"\x93NUMPY\x01\x00".to_vec();
        v.extend((header.len() as u16).to_le_bytes());
        v.extend(header.as_bytes());
        v.extend(data);
        v
    }

    #[test]
    fn malformed_files_are_clear_errors() {
        let d = dir();
        let case = |name: &str, bytes: Vec<u8>| {
            let p = d.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            let e1 = input_type(&p, None).err().map(|e| e.to_string());
            let e2 = read::<u32>(&p).err().map(|e| e.to_string());
            e1.or(e2).unwrap_or_else(|| panic!("{name} was accepted"))
        };
        assert!(case("magic.npy", b"PK\x03\x04 not numpy at all".to_vec()).contains("not a valid .npy file"));
        assert!(case("complex.npy", npy_bytes("<c8", false, "(2,)", &[0; 16])).contains("dtype <c8 is not supported"));
        assert!(case("shape.npy", npy_bytes("<u4", false, "(2, 2)", &[0; 16])).contains("not one-dimensional"));
        assert!(case("fortran.npy", npy_bytes("<u4", true, "(4,)", &[0; 16])).contains("Fortran order"));
        assert!(case("short.npy", npy_bytes("<u4", false, "(4,)", &[0; 10])).contains("truncated"));
        let odd = d.path().join("odd.bin");
        std::fs::write(&odd, [0u8; 7]).unwrap();
        let e = read::<u32>(&odd).unwrap_err().to_string();
        assert!(e.contains("7 bytes is not a whole number of 4-byte u32 elements"), "{e}");
        let p = d.path().join("f.npy");
        write::<f32>(&p, &[1.0], false).unwrap();
        assert!(read::<u32>(&p).unwrap_err().to_string().contains("holds f32, not u32"));
        assert!(input_type(&p, Some(ElemType::U32)).unwrap_err().to_string().contains("--type u32 was given"));
        std::fs::write(d.path().join("x.bin"), [0u8; 8]).unwrap();
        assert!(input_type(&d.path().join("x.bin"), None).unwrap_err().to_string().contains("needs --type"));
        assert!(input_type(&d.path().join("none.bin"), None).unwrap_err().to_string().contains("cannot open"));
        assert!(input_type(d.path(), Some(ElemType::U32)).unwrap_err().to_string().contains("is a folder"));
    }

    #[test]
    fn matrices_are_two_dimensional_or_an_empty_vector() {
        let d = dir();
        let p = |name: &str| d.path().join(name);
        write_shaped::<f32>(&p("m.npy"), &[0.0; 6], &[2, 3], false).unwrap();
        write::<f32>(&p("e.npy"), &[], false).unwrap();
        write::<f32>(&p("v.npy"), &[1.0], false).unwrap();
        let of = |name: &str| matrix_of(&p(name), None, &[ElemType::F32], "batched", None);
        assert_eq!(of("m.npy").unwrap(), (ElemType::F32, vec![2, 3]));
        assert_eq!(of("e.npy").unwrap(), (ElemType::F32, vec![0]));
        assert!(of("v.npy").unwrap_err().to_string().contains("shape [1] is not two-dimensional"));
        let e = matrix_of(&p("m.npy"), None, &[ElemType::U32], "batched", None).unwrap_err().to_string();
        assert!(e.contains("holds f32, but batched takes u32"), "{e}");
    }

    #[test]
    fn bool_arrays_are_flags_of_0_and_1() {
        let d = dir();
        let p = d.path().join("b.npy");
        std::fs::write(&p, npy_bytes("|b1", false, "(4,)", &[1, 0, 0, 1])).unwrap();
        check_flags(&p, "--flags", 4).unwrap();
        assert_eq!(read_flags(&p).unwrap(), [1, 0, 0, 1]);
        let e = check_flags(&p, "--flags", 5).unwrap_err().to_string();
        assert!(e.contains("--flags holds 4 values, but the input has 5"), "{e}");
        std::fs::write(&p, npy_bytes("|b1", false, "(4,)", &[1, 0, 3, 1])).unwrap();
        assert!(read_flags(&p).unwrap_err().to_string().contains("b.npy: element 2 is 3, not a bool (0 or 1)"));
        let u = d.path().join("u.npy");
        write::<u8>(&u, &[0, 7], false).unwrap();
        check_flags(&u, "--heads", 2).unwrap();
        assert_eq!(read_flags(&u).unwrap(), [0, 7]);
        let w = d.path().join("w.npy");
        write::<u16>(&w, &[0, 7], false).unwrap();
        let e = check_flags(&w, "--heads", 2).unwrap_err().to_string();
        assert!(e.contains("w.npy: holds u16, but --heads takes u8 or bool"), "{e}");
        let raw = d.path().join("r.bin");
        std::fs::write(&raw, [0u8, 5, 1]).unwrap();
        check_flags(&raw, "--flags", 3).unwrap();
        assert_eq!(read_flags(&raw).unwrap(), [0, 5, 1]);
    }

    #[test]
    fn a_type_option_reads_raw_side_files_and_must_agree_with_a_npy_file() {
        let d = dir();
        let raw = d.path().join("k.bin");
        std::fs::write(&raw, [0u8; 8]).unwrap();
        let types = [ElemType::U16, ElemType::U32];
        let of = |p: &Path, t| side_type_of(p, "--keys", &types, Some(("--key-type", t)));
        assert_eq!(of(&raw, Some(ElemType::U16)).unwrap(), ElemType::U16);
        assert_eq!(input_len(&raw, ElemType::U16).unwrap(), 4);
        assert!(of(&raw, None).unwrap_err().to_string().contains("k.bin: a raw --keys file needs --key-type"));
        let npy = d.path().join("k.npy");
        write::<u32>(&npy, &[1, 2], false).unwrap();
        assert_eq!(of(&npy, None).unwrap(), ElemType::U32);
        assert_eq!(of(&npy, Some(ElemType::U32)).unwrap(), ElemType::U32);
        let e = of(&npy, Some(ElemType::U16)).unwrap_err().to_string();
        assert!(e.contains("k.npy: holds u32, but --key-type u16 was given"), "{e}");
        assert_eq!(side_type(&raw, "--values", &[ElemType::U32]).unwrap(), ElemType::U32);
    }

    #[test]
    fn a_raw_matrix_takes_its_shape_from_rows_and_cols() {
        let d = dir();
        let raw = d.path().join("m.bin");
        write::<u32>(&raw, &[0, 1, 2, 3, 4, 5], false).unwrap();
        let of = |dims| matrix_of(&raw, Some(ElemType::U32), &[ElemType::U32], "batched", dims);
        assert_eq!(of(Some([2, 3])).unwrap(), (ElemType::U32, vec![2, 3]));
        let e = of(Some([4, 2])).unwrap_err().to_string();
        assert!(e.contains("m.bin: holds 6 u32 elements, not ROWS x COLS = 4 x 2"), "{e}");
        assert!(of(None).unwrap_err().to_string().contains("a raw file has no shape: give ROWS and COLS"));
        assert_eq!(read_shaped::<u32>(&raw, 2).unwrap(), [0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn readers_of_the_bytes_as_they_lie_refuse_big_endian_files() {
        let d = dir();
        let p = d.path().join("be.npy");
        let check = |dtype: &str, data: &[u8]| {
            std::fs::write(&p, npy_bytes(dtype, false, "(1,)", data)).unwrap();
            check_little_endian(&p, &header_of(&p).unwrap())
        };
        let e = check(">u4", &[0, 0, 0, 1]).unwrap_err().to_string();
        assert!(e.contains("be.npy: big-endian data is not supported"), "{e}");
        assert!(check(">f8", &[0; 8]).is_err());
        check("<u4", &[1, 0, 0, 0]).unwrap();
        check("|u1", &[1]).unwrap();
    }

    #[test]
    fn big_endian_npy_is_read_in_native_order() {
        let d = dir();
        let p = d.path().join("be.npy");
        std::fs::write(&p, npy_bytes(">u4", false, "(2,)", &[0, 0, 0, 1, 0, 0, 1, 0])).unwrap();
        assert_eq!(read::<u32>(&p).unwrap(), [1, 256]);
    }

    /// Every reader on `bytes` under two file names: a value or an error that names the file,
    /// never a panic.
    fn try_all(bytes: &[u8]) -> Result<(), proptest::test_runner::TestCaseError> {
        let d = dir();
        for name in ["f.npy", "f.bin"] {
            let p = d.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            let _ = input_type(&p, None);
            if let Err(e) = read::<u32>(&p) {
                proptest::prop_assert!(e.to_string().contains(name), "errors name the file: {e}");
            }
            let _ = read::<f64>(&p);
        }
        Ok(())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, ..Default::default() })]

        #[test]
        fn arbitrary_bytes_are_values_or_errors(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300)) {
            try_all(&bytes)?;
        }

        #[test]
        fn damaged_npy_files_are_values_or_errors(at in 0usize..200, value: u8, cut in 0usize..200) {
            let d = dir();
            let p = d.path().join("v.npy");
            write::<u32>(&p, &[1, 2, 3, 4, 5, 6, 7, 8], true).unwrap();
            let mut bytes = std::fs::read(&p).unwrap();
            let at = at % bytes.len();
            bytes[at] = value;
            bytes.truncate(bytes.len() - cut % bytes.len());
            try_all(&bytes)?;
        }
    }
}
