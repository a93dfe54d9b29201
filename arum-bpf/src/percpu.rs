//! Reading the programs' maps: keys and values are C structs of u32/u64 fields in the machine's
//! byte order; per-CPU maps hold one value per possible CPU, summed here.

use libbpf_rs::{MapCore, MapFlags};

/// The `i`th u32 of a key or value.
pub fn u32_at(bytes: &[u8], i: usize) -> u32 {
    u32::from_ne_bytes(bytes[i * 4..i * 4 + 4].try_into().expect("4 bytes"))
}

/// The `i`th u64 of a value.
pub fn u64_at(bytes: &[u8], i: usize) -> u64 {
    u64::from_ne_bytes(bytes[i * 8..i * 8 + 8].try_into().expect("8 bytes"))
}

/// A key and its value's copies, one per possible CPU.
pub type Entry = (Vec<u8>, Vec<Vec<u8>>);

/// Every key of `map` with its per-CPU values.
pub fn entries<M: MapCore>(map: &M) -> Result<Vec<Entry>, String> {
    let mut out = Vec::new();
    for key in map.keys() {
        let values = map
            .lookup_percpu(&key, MapFlags::ANY)
            .map_err(|e| format!("reading the BPF map {:?}: {e}", map.name()))?;
        // A key removed between listing and lookup holds nothing.
        if let Some(values) = values {
            out.push((key, values));
        }
    }
    Ok(out)
}

/// The u64 fields of a per-CPU value, each summed over the CPUs (`max`: the fields taken as the
/// largest instead).
pub fn sum_fields(copies: &[Vec<u8>], fields: usize, max: &[usize]) -> Vec<u64> {
    let mut out = vec![0u64; fields];
    for copy in copies {
        for (i, o) in out.iter_mut().enumerate() {
            let v = u64_at(copy, i);
            *o = if max.contains(&i) {
                (*o).max(v)
            } else {
                o.wrapping_add(v)
            };
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_cpu_copies_add_up_and_maxima_are_the_largest() {
        let copy = |v: [u64; 3]| v.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>();
        let copies = vec![copy([1, 5, 7]), copy([2, 9, 3]), copy([0, 0, 0])];
        assert_eq!(sum_fields(&copies, 3, &[1]), vec![3, 9, 10]);
    }
}
