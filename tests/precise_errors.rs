//! Every kind of bad input gets its exact error, never a crash or silent
//! corruption: null, invalid and stale handles, unknown types, offsets
//! outside the object or off its handle fields, bad layouts, oversized
//! objects, the heap limit, frame and native-state misuse.
#![cfg(feature = "precise")]

mod common;

use common::on_thread;
use defergc::precise::{self, Config, Error, Field, Frame, Handle, TypeId};
use serial_test::serial;
use std::sync::OnceLock;

/// `struct S { a: u64, h: Handle, b: u64 }` (handle at offset 8).
fn s_type() -> TypeId {
    static T: OnceLock<TypeId> = OnceLock::new();
    *T.get_or_init(|| precise::register_type(24, &[8]).unwrap())
}

#[test]
#[serial]
fn null_invalid_and_stale_handles_are_told_apart() {
    on_thread(|| {
        assert_eq!(Handle::from_raw(0), Err(Error::NullHandle));
        // An index beyond every one there can be, and one of a block that
        // was never laid out (the last block id; an index is the block id
        // times 2^13 plus the cell, plus one).
        let beyond = Handle::from_raw(0xFF_FFFF_FFFF).unwrap();
        assert_eq!(precise::deref(beyond), Err(Error::InvalidHandle));
        let live = precise::alloc(s_type()).unwrap();
        let never = (((1u64 << 24) - 1) << 13) + 1 + (1 << 40);
        let unused = Handle::from_raw(never).unwrap();
        assert_eq!(precise::deref(unused), Err(Error::InvalidHandle));
        // A wrong generation on a live index.
        let forged = Handle::from_raw(live.to_raw() + (1 << 40)).unwrap();
        assert_eq!(precise::deref(forged), Err(Error::StaleHandle));

        precise::collect().unwrap(); // `live` was never rooted
        for result in [
            precise::deref(live).map(|_| ()),
            precise::load(live, 8).map(|_| ()),
            precise::store(live, 8, None),
            precise::read_u64(live, 0).map(|_| ()),
            precise::write_u64(live, 0, 1),
            precise::size_of(live).map(|_| ()),
            precise::type_of(live).map(|_| ()),
        ] {
            assert_eq!(result, Err(Error::StaleHandle));
        }

        // A stale or invalid *value* cannot be stored into the heap.
        let frame = Frame::new().unwrap();
        let holder = precise::alloc(s_type()).unwrap();
        frame.root(holder).unwrap();
        assert_eq!(precise::store(holder, 8, live), Err(Error::StaleHandle));
        assert_eq!(precise::store(holder, 8, beyond), Err(Error::InvalidHandle));
        assert_eq!(
            precise::load(holder, 8),
            Ok(None),
            "a failed store changed the field"
        );
        let root = precise::GlobalRoot::new(None).unwrap();
        assert_eq!(root.set(live), Err(Error::StaleHandle));
        assert_eq!(
            precise::GlobalRoot::new(live).err(),
            Some(Error::StaleHandle)
        );
    });
}

/// The two objects a thread allocated last are stored without a lookup
/// (they are live until the thread's next handshake); once a cycle has
/// freed one, by a collection the thread waited for or one it acknowledged
/// at its safepoints, storing its handle is an error again.
#[test]
#[serial]
fn the_last_allocation_is_checked_again_after_a_cycle() {
    on_thread(|| {
        let field = Field::new(s_type(), 8).unwrap();
        let frame = Frame::new().unwrap();
        let holder = precise::alloc(s_type()).unwrap();
        frame.root(holder).unwrap();

        // Stored at once, or after one more allocation: fine.
        let fresh = precise::alloc(s_type()).unwrap();
        precise::store_field(holder, field, fresh).unwrap();
        let first = precise::alloc(s_type()).unwrap();
        let second = precise::alloc(s_type()).unwrap();
        precise::store_field(second, field, first).unwrap();
        precise::store_field(holder, field, second).unwrap();
        precise::store_field(holder, field, None).unwrap();

        // The one before the last, never rooted, freed by a collection:
        // the allocation after it is what the thread allocated last.
        let lost = precise::alloc(s_type()).unwrap();
        precise::collect().unwrap();
        let last = precise::alloc(s_type()).unwrap();
        assert_eq!(
            precise::alloc_with(s_type(), &[Some(lost)]).err(),
            Some(Error::StaleHandle)
        );
        precise::store_field(holder, field, last).unwrap();
        precise::store_field(holder, field, None).unwrap();

        // Never rooted (nor the allocation after it), freed by a collection
        // this thread waited for.
        let lost = precise::alloc(s_type()).unwrap();
        precise::alloc(s_type()).unwrap();
        precise::collect().unwrap();
        assert_eq!(precise::deref(lost), Err(Error::StaleHandle));
        assert_eq!(
            precise::store_field(holder, field, lost),
            Err(Error::StaleHandle)
        );
        assert_eq!(precise::store(holder, 8, lost), Err(Error::StaleHandle));

        // Freed by a cycle this thread only acknowledged, at safepoints.
        let lost = precise::alloc(s_type()).unwrap();
        let before = precise::stats().collections;
        precise::gc_async();
        while precise::stats().collections == before {
            precise::safepoint().unwrap();
            std::thread::yield_now();
        }
        assert_eq!(precise::deref(lost), Err(Error::StaleHandle));
        assert_eq!(
            precise::store_field(holder, field, lost),
            Err(Error::StaleHandle)
        );
        assert_eq!(precise::load(holder, 8), Ok(None));
        frame.pop().unwrap();
    });
}

#[test]
#[serial]
fn unknown_type_ids_and_wrong_kinds_are_rejected() {
    on_thread(|| {
        assert_eq!(TypeId::from_raw(0), Err(Error::UnknownType));
        assert_eq!(TypeId::from_raw(u32::MAX), Err(Error::UnknownType));
        assert_eq!(TypeId::from_raw(s_type().to_raw()), Ok(s_type()));
        let arr = precise::register_handle_array_type().unwrap();
        let bytes = precise::register_bytes_type().unwrap();
        assert_eq!(precise::alloc(arr), Err(Error::WrongTypeKind));
        assert_eq!(precise::alloc(bytes), Err(Error::WrongTypeKind));
        assert_eq!(precise::alloc_array(s_type(), 4), Err(Error::WrongTypeKind));
        assert_eq!(
            precise::alloc_array(arr, usize::MAX / 4),
            Err(Error::TooLarge)
        );
        assert_eq!(
            precise::alloc_array(bytes, u32::MAX as usize),
            Err(Error::TooLarge)
        );
        assert_eq!(
            precise::alloc_array(bytes, precise::MAX_OBJECT_SIZE + 1),
            Err(Error::TooLarge)
        );
    });
}

#[test]
fn malformed_layouts_are_rejected_at_registration() {
    assert_eq!(
        precise::register_type(16, &[4]),
        Err(Error::InvalidLayout),
        "unaligned"
    );
    assert_eq!(
        precise::register_type(16, &[16]),
        Err(Error::InvalidLayout),
        "past the end"
    );
    assert_eq!(
        precise::register_type(12, &[8]),
        Err(Error::InvalidLayout),
        "straddles the end"
    );
    assert_eq!(
        precise::register_type(32, &[8, 8]),
        Err(Error::InvalidLayout),
        "repeated"
    );
    assert_eq!(
        precise::register_type(16, &[usize::MAX - 7]),
        Err(Error::InvalidLayout)
    );
    assert_eq!(
        precise::register_type(usize::MAX, &[]),
        Err(Error::TooLarge)
    );
    assert!(
        precise::register_type(0, &[]).is_ok(),
        "an empty struct is fine"
    );
}

#[test]
#[serial]
fn field_offsets_outside_the_object_or_off_its_handle_fields_are_rejected() {
    on_thread(|| {
        let frame = Frame::new().unwrap();
        let s = precise::alloc(s_type()).unwrap();
        frame.root(s).unwrap();
        let other = precise::alloc(s_type()).unwrap();
        frame.root(other).unwrap();
        // Handle loads and stores.
        assert_eq!(precise::load(s, 24), Err(Error::OutOfBounds));
        assert_eq!(precise::load(s, 20), Err(Error::OutOfBounds));
        assert_eq!(precise::load(s, usize::MAX), Err(Error::OutOfBounds));
        assert_eq!(precise::load(s, 0), Err(Error::NotAHandleField));
        assert_eq!(precise::load(s, 16), Err(Error::NotAHandleField));
        assert_eq!(precise::load(s, 4), Err(Error::NotAHandleField));
        assert_eq!(precise::store(s, 0, other), Err(Error::NotAHandleField));
        assert_eq!(precise::store(s, 32, other), Err(Error::OutOfBounds));
        precise::store(s, 8, other).unwrap();
        assert_eq!(precise::load(s, 8), Ok(Some(other)));
        // Bytes.
        let mut buf = [0u8; 8];
        assert_eq!(
            precise::read_bytes(s, 17, &mut buf),
            Err(Error::OutOfBounds)
        );
        assert_eq!(
            precise::read_bytes(s, usize::MAX, &mut buf),
            Err(Error::OutOfBounds)
        );
        assert_eq!(precise::write_bytes(s, 20, &buf), Err(Error::OutOfBounds));
        assert_eq!(
            precise::write_bytes(s, 4, &buf),
            Err(Error::HandleFieldOverlap)
        );
        assert_eq!(
            precise::write_bytes(s, 15, &[1]),
            Err(Error::HandleFieldOverlap)
        );
        assert_eq!(precise::write_u64(s, 8, 7), Err(Error::HandleFieldOverlap));
        assert_eq!(precise::read_u64(s, 17), Err(Error::OutOfBounds));
        assert_eq!(
            precise::load(s, 8),
            Ok(Some(other)),
            "a rejected write changed a handle"
        );
        precise::write_bytes(s, 0, &[1; 8]).unwrap();
        precise::write_bytes(s, 16, &[2; 8]).unwrap();
        precise::write_u64(s, 3, 0x0102).unwrap_err();
        precise::read_bytes(s, 8, &mut buf).unwrap(); // handles may be read as bytes
        assert_eq!(u64::from_ne_bytes(buf), other.to_raw());
        // Arrays.
        let arr = precise::alloc_array(precise::register_handle_array_type().unwrap(), 3).unwrap();
        frame.root(arr).unwrap();
        assert_eq!(precise::load(arr, 24), Err(Error::OutOfBounds));
        assert_eq!(precise::load(arr, 12), Err(Error::NotAHandleField));
        assert_eq!(
            precise::write_u64(arr, 0, 1),
            Err(Error::HandleFieldOverlap)
        );
        precise::store(arr, 16, s).unwrap();
        let bytes = precise::alloc_array(precise::register_bytes_type().unwrap(), 13).unwrap();
        frame.root(bytes).unwrap();
        assert_eq!(precise::load(bytes, 0), Err(Error::NotAHandleField));
        assert_eq!(precise::store(bytes, 8, s), Err(Error::OutOfBounds));
        precise::write_bytes(bytes, 5, &[9; 8]).unwrap();
        assert_eq!(
            precise::write_bytes(bytes, 6, &[9; 8]),
            Err(Error::OutOfBounds)
        );
        assert_eq!(precise::read_u64(bytes, 5), Ok(u64::from_ne_bytes([9; 8])));
    });
}

#[test]
#[serial]
fn fields_are_checked_when_made_and_against_the_object_type_when_used() {
    on_thread(|| {
        let s = s_type();
        // Made: only a handle field of a struct type.
        assert_eq!(Field::new(s, 0), Err(Error::NotAHandleField));
        assert_eq!(Field::new(s, 4), Err(Error::NotAHandleField));
        assert_eq!(Field::new(s, 16), Err(Error::NotAHandleField));
        assert_eq!(Field::new(s, 20), Err(Error::OutOfBounds));
        assert_eq!(Field::new(s, 24), Err(Error::OutOfBounds));
        assert_eq!(Field::new(s, usize::MAX), Err(Error::OutOfBounds));
        let array = precise::register_handle_array_type().unwrap();
        assert_eq!(Field::new(array, 0), Err(Error::WrongTypeKind));
        let bytes = precise::register_bytes_type().unwrap();
        assert_eq!(Field::new(bytes, 0), Err(Error::WrongTypeKind));
        let h = Field::new(s, 8).unwrap();
        assert_eq!((h.type_id(), h.offset()), (s, 8));

        let frame = Frame::new().unwrap();
        let a = precise::alloc(s).unwrap();
        frame.root(a).unwrap();
        let b = precise::alloc(s).unwrap();
        frame.root(b).unwrap();
        // Same layout, another type: still refused.
        let twin = precise::alloc(precise::register_type(24, &[8]).unwrap()).unwrap();
        frame.root(twin).unwrap();
        let arr = precise::alloc_array(array, 4).unwrap();
        frame.root(arr).unwrap();

        assert_eq!(precise::load_field(a, h), Ok(None));
        precise::store_field(a, h, b).unwrap();
        assert_eq!(precise::load_field(a, h), Ok(Some(b)));
        assert_eq!(precise::load(a, 8), Ok(Some(b)), "the same slot as store");
        assert_eq!(precise::store_field(twin, h, b), Err(Error::WrongType));
        assert_eq!(precise::load_field(twin, h), Err(Error::WrongType));
        assert_eq!(precise::store_field(arr, h, b), Err(Error::WrongType));
        assert_eq!(precise::load(twin, 8), Ok(None), "a refused store wrote");
        // Several fields with one lookup: each against the object's type.
        let twin_h = Field::new(precise::type_of(twin).unwrap(), 8).unwrap();
        assert_eq!(precise::load_fields(a, [h, h]), Ok([Some(b), Some(b)]));
        assert_eq!(precise::load_fields(a, []), Ok([]));
        assert_eq!(precise::load_fields(twin, [twin_h]), Ok([None]));
        assert_eq!(
            precise::load_fields(twin, [twin_h, h]),
            Err(Error::WrongType)
        );
        assert_eq!(precise::load_fields(a, [h, twin_h]), Err(Error::WrongType));
        assert_eq!(precise::load_fields(arr, [h]), Err(Error::WrongType));
        // By offset: each checked as by load, before anything is written.
        let mut out = [Some(a); 3];
        assert_eq!(precise::load_many(a, &[8, 8], &mut out), Ok(()));
        assert_eq!(out, [Some(b), Some(b), Some(a)]);
        for bad in [&[8, 0][..], &[16], &[usize::MAX]] {
            let mut out = [None; 2];
            assert!(precise::load_many(a, bad, &mut out).is_err(), "{bad:?}");
            assert_eq!(out, [None, None], "{bad:?} wrote");
        }
        assert_eq!(
            precise::load_many(a, &[8, 8], &mut [None]),
            Err(Error::OutOfBounds)
        );

        // Stale objects and values are refused as by store.
        let dead = precise::alloc(s).unwrap();
        precise::collect().unwrap();
        assert_eq!(precise::store_field(a, h, dead), Err(Error::StaleHandle));
        assert_eq!(precise::store_field(dead, h, b), Err(Error::StaleHandle));
        assert_eq!(precise::load_field(dead, h), Err(Error::StaleHandle));
        assert_eq!(precise::load_fields(dead, [h, h]), Err(Error::StaleHandle));
        assert_eq!(precise::load_fields(dead, []), Err(Error::StaleHandle));
        assert_eq!(
            precise::load_many(dead, &[8], &mut [None]),
            Err(Error::StaleHandle)
        );
        assert_eq!(precise::load_field(a, h), Ok(Some(b)));
        // The field keeps its object alive through collections.
        precise::store_field(b, h, None).unwrap();
        let c = precise::alloc(s).unwrap();
        precise::store_field(b, h, c).unwrap();
        precise::collect().unwrap();
        assert_eq!(precise::load_field(b, h), Ok(Some(c)));
        assert_eq!(precise::type_of(c), Ok(s));
    });
}

#[test]
#[serial]
fn the_heap_limit_fails_allocation_cleanly_and_recovers() {
    on_thread(|| {
        precise::collect().unwrap();
        let start = precise::stats().heap_size;
        let limit = start + (16 << 20);
        precise::set_heap_limit(Some(limit));
        let bytes = precise::register_bytes_type().unwrap();
        let frame = Frame::new().unwrap();
        let mut small_failed = None;
        for i in 0..(1 << 20) {
            match precise::alloc(s_type()) {
                Ok(h) => drop(frame.root(h).unwrap()),
                Err(e) => {
                    small_failed = Some((i, e));
                    break;
                }
            }
        }
        let (count, err) = small_failed.expect("16 MB limit never reached by 32 MB of objects");
        assert_eq!(err, Error::HeapLimit);
        assert!(count > 100_000, "failed after only {count} objects");
        assert_eq!(
            precise::alloc_array(bytes, 1 << 20),
            Err(Error::HeapLimit),
            "large object"
        );
        assert!(precise::stats().heap_size <= limit);
        drop(frame);
        // The collection run by the next allocation makes room.
        let big = precise::alloc_array(bytes, 1 << 20).expect("room after the roots were dropped");
        precise::write_u64(big, 0, 1).unwrap();
        precise::set_heap_limit(None);
    });
}

#[test]
#[serial]
fn frame_and_root_misuse_is_reported() {
    on_thread(|| {
        assert_eq!(precise::root(None), Err(Error::NoFrame));
        assert_eq!(
            precise::pop_frame(precise::FrameId::from_depth(1)),
            Err(Error::NoFrame)
        );
        let f = precise::push_frame().unwrap();
        let slot = precise::root(None).unwrap();
        assert_eq!(precise::set_root(slot + 1, None), Err(Error::NoSuchRoot));
        assert_eq!(precise::get_root(usize::MAX), Err(Error::NoSuchRoot));
        assert_eq!(precise::unregister_thread(), Err(Error::FramesOpen));
        precise::pop_frame(f).unwrap();
        precise::unregister_thread().unwrap();
        assert!(!precise::is_thread_registered());
        assert_eq!(precise::unregister_thread(), Err(Error::NotRegistered));
        precise::register_thread().unwrap();
        assert!(precise::is_thread_registered());
        if cfg!(debug_assertions) {
            let frame = Frame::new().unwrap();
            let garbage = Handle::from_raw(0xFF_FFFF_FFFF).unwrap();
            assert_eq!(frame.root(garbage), Err(Error::InvalidHandle));
            assert_eq!(precise::root(garbage), Err(Error::InvalidHandle));
        }
    });
}

#[test]
#[serial]
fn a_frame_guard_outliving_its_thread_registration_is_inert() {
    on_thread(|| {
        let frame = Frame::new().unwrap();
        precise::pop_frame(frame.id()).unwrap();
        precise::unregister_thread().unwrap();
        assert_eq!(frame.root(None), Err(Error::NotRegistered));
        drop(frame); // no panic: the frame is gone with the registration
    });
}

#[test]
#[serial]
fn native_state_misuse_is_reported() {
    on_thread(|| {
        assert_eq!(precise::leave_native(), Err(Error::NotInNative));
        precise::enter_native().unwrap();
        assert_eq!(precise::enter_native(), Err(Error::InNative));
        assert_eq!(precise::alloc(s_type()), Err(Error::InNative));
        assert_eq!(precise::push_frame(), Err(Error::InNative));
        assert_eq!(precise::collect(), Err(Error::InNative));
        assert_eq!(precise::safepoint(), Err(Error::InNative));
        assert_eq!(
            precise::deref(Handle::from_raw(1).unwrap()),
            Err(Error::InNative)
        );
        precise::leave_native().unwrap();
        assert_eq!(precise::leave_native(), Err(Error::NotInNative));
        let frame = Frame::new().unwrap();
        let guard = precise::NativeGuard::enter().unwrap();
        assert_eq!(frame.root(None), Err(Error::InNative));
        drop(guard);
        assert!(frame.root(None).is_ok());
    });
}

#[test]
#[serial]
fn global_root_misuse_is_reported() {
    assert_eq!(
        // SAFETY: rejected before anything is read.
        unsafe { precise::add_global_root(std::ptr::null()) },
        Err(Error::BadRootAddress)
    );
    assert_eq!(
        // SAFETY: rejected before anything is read.
        unsafe { precise::add_global_root(std::ptr::without_provenance::<u64>(3)) },
        Err(Error::BadRootAddress)
    );
    let slot = Box::new(0u64);
    assert_eq!(precise::remove_global_root(&*slot), Err(Error::UnknownRoot));
}

#[test]
#[serial]
fn init_after_start_is_refused() {
    on_thread(|| {
        precise::init().unwrap();
        assert!(precise::is_thread_registered(), "init registers its thread");
        assert_eq!(
            precise::init_with(Config::DEFAULT),
            Err(Error::AlreadyInitialized)
        );
    });
}
