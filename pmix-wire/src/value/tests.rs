//! Byte-for-byte checks of PROTOCOL.md §5.4–5.5's examples and of captured values.

use alloc::vec;
use alloc::vec::Vec;

use super::*;
use crate::limits::Limits;
use crate::types::BufferType;

fn enc<T: Element>(v: &T) -> Vec<u8> {
    let mut w = Writer::new(BufferType::NonDescribed);
    v.encode(&mut w);
    w.finish().unwrap()
}

fn dec<T: Element>(b: &[u8]) -> Result<T, WireError> {
    let mut r = Reader::new(b, BufferType::NonDescribed, Limits::DEFAULT);
    let v = T::decode(&mut r)?;
    r.finish()?;
    Ok(v)
}

#[test]
fn the_worked_example_collect_true_is_byte_for_byte() {
    let info = Info::new("pmix.collect", true);
    let mut w = Writer::new(BufferType::NonDescribed);
    w.pack(core::slice::from_ref(&info));
    let mut want = vec![0x02, 0x1a];
    want.extend_from_slice(b"pmix.collect\0");
    want.extend_from_slice(&[0x00, 0x01, 0x01]);
    assert_eq!(w.as_bytes(), &want[..]);
    let mut r = Reader::new(&want, BufferType::NonDescribed, Limits::DEFAULT);
    assert_eq!(r.unpack::<Info>("info"), Ok(vec![info]));
}

#[test]
fn a_string_is_its_zigzag_length_with_the_nul() {
    assert_eq!(enc(&WStr::from("vm")), [0x06, b'v', b'm', 0]);
    assert_eq!(enc(&None::<WStr>), [0x00]);
    assert_eq!(dec::<WStr>(&[0x06, b'v', b'm', 0]), Ok(WStr::from("vm")));
}
