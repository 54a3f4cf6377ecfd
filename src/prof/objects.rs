//! The program's loaded objects (the executable and its shared
//! libraries), as a profile's mappings name them: each one's executable
//! address range, file and GNU build id, read with `dl_iterate_phdr`.
//! `go tool pprof` finds the binary by them (without, it says "Main
//! binary filename not available").

/// One loaded object's executable segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Object {
    /// First and one past the last address of the segment.
    pub(crate) start: u64,
    pub(crate) limit: u64,
    /// The segment's offset in its file.
    pub(crate) file_offset: u64,
    /// The file (the executable's from `/proc/self/exe`).
    pub(crate) path: String,
    /// The GNU build id, in hexadecimal ("" without one).
    pub(crate) build_id: String,
}

/// Every loaded object with an executable segment, the executable first.
pub(crate) fn loaded() -> Vec<Object> {
    let mut found: Vec<Object> = Vec::new();
    // SAFETY: the callback only reads the headers it is handed, for the
    // duration of the call, and pushes to the Vec it is given.
    unsafe {
        libc::dl_iterate_phdr(Some(each), (&mut found as *mut Vec<Object>).cast());
    }
    found
}

/// `dl_iterate_phdr`'s callback: records one object.
///
/// # Safety
/// `info` is what `dl_iterate_phdr` passes; `data` is the `Vec<Object>`
/// of [`loaded`].
unsafe extern "C" fn each(
    info: *mut libc::dl_phdr_info,
    _size: libc::size_t,
    data: *mut libc::c_void,
) -> libc::c_int {
    // SAFETY: as the contract above says.
    let (info, found) = unsafe { (&*info, &mut *data.cast::<Vec<Object>>()) };
    let headers: &[libc::Elf64_Phdr] = if info.dlpi_phdr.is_null() {
        &[]
    } else {
        // SAFETY: dlpi_phdr points to dlpi_phnum program headers.
        unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) }
    };
    let base = info.dlpi_addr;
    let name = if info.dlpi_name.is_null() {
        String::new()
    } else {
        // SAFETY: a NUL-terminated path owned by the loader.
        unsafe { std::ffi::CStr::from_ptr(info.dlpi_name) }
            .to_string_lossy()
            .into_owned()
    };
    let path = if name.is_empty() && found.is_empty() {
        // The executable comes first and has no name here.
        std::fs::read_link("/proc/self/exe")
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    } else {
        name
    };
    if path.is_empty() || path.starts_with("linux-vdso") {
        return 0;
    }
    let mut build_id = String::new();
    for h in headers {
        if h.p_type == libc::PT_NOTE {
            // SAFETY: a loaded PT_NOTE segment is mapped at base + vaddr
            // for p_memsz bytes.
            let notes = unsafe {
                std::slice::from_raw_parts((base + h.p_vaddr) as *const u8, h.p_memsz as usize)
            };
            if let Some(id) = gnu_build_id(notes) {
                build_id = id.iter().map(|b| format!("{b:02x}")).collect();
            }
        }
    }
    for h in headers {
        if h.p_type == libc::PT_LOAD && h.p_flags & libc::PF_X != 0 {
            found.push(Object {
                start: base + h.p_vaddr,
                limit: base + h.p_vaddr + h.p_memsz,
                file_offset: h.p_offset,
                path: path.clone(),
                build_id: build_id.clone(),
            });
        }
    }
    0
}

/// The GNU build id in a block of ELF notes, if there is one.
fn gnu_build_id(mut notes: &[u8]) -> Option<&[u8]> {
    const NT_GNU_BUILD_ID: u32 = 3;
    let word = |b: &[u8]| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
    let align4 = |n: usize| (n + 3) & !3;
    while notes.len() >= 12 {
        let (namesz, descsz, kind) = (
            word(&notes[0..]) as usize,
            word(&notes[4..]) as usize,
            word(&notes[8..]),
        );
        let name_end = 12 + align4(namesz);
        let desc_end = name_end.checked_add(align4(descsz))?;
        if desc_end > notes.len() {
            return None;
        }
        if kind == NT_GNU_BUILD_ID && &notes[12..12 + namesz] == b"GNU\0" {
            return Some(&notes[name_end..name_end + descsz]);
        }
        notes = &notes[desc_end..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_executable_comes_first_with_its_path_and_this_function() {
        let objects = loaded();
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let first = &objects[0];
        assert_eq!(first.path, exe.display().to_string());
        let here =
            the_executable_comes_first_with_its_path_and_this_function as fn() as usize as u64;
        assert!(
            objects
                .iter()
                .any(|o| o.path == first.path && (o.start..o.limit).contains(&here)),
            "{objects:?}"
        );
    }

    #[test]
    fn a_build_id_note_is_read() {
        // namesz 4, descsz 3, type 3, "GNU\0", three bytes padded to four.
        let mut note = Vec::new();
        for w in [4u32, 3, 3] {
            note.extend_from_slice(&w.to_ne_bytes());
        }
        note.extend_from_slice(b"GNU\0\xab\xcd\xef\0");
        assert_eq!(gnu_build_id(&note), Some(&[0xab, 0xcd, 0xef][..]));
        assert_eq!(gnu_build_id(&note[..10]), None);
    }
}
