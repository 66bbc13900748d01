//! libstdc++'s `std::nth_element`, `std::sort` and `std::partial_sort`, step for step, so that
//! `topk` orders ties exactly as upstream's CPU kernel does (it calls these on `(value, index)`
//! pairs; which of several equal values it returns depends on their element moves). Ported from
//! GCC's `bits/stl_algo.h` and `bits/stl_heap.h`; `less` is the comparator upstream passes.

const THRESHOLD: usize = 16; // _S_threshold

fn lg(n: usize) -> usize {
    (usize::BITS - 1 - n.leading_zeros()) as usize
}

/// `std::nth_element(v.begin(), v.begin() + nth, v.end(), less)`.
pub fn nth_element<E: Copy>(v: &mut [E], nth: usize, less: &impl Fn(&E, &E) -> bool) {
    if v.is_empty() || nth >= v.len() {
        return;
    }
    let (mut first, mut last) = (0, v.len());
    let mut depth = 2 * lg(v.len());
    while last - first > 3 {
        if depth == 0 {
            heap_select(v, first, nth + 1, last, less);
            v.swap(first, nth);
            return;
        }
        depth -= 1;
        let cut = unguarded_partition_pivot(v, first, last, less);
        if cut <= nth {
            first = cut;
        } else {
            last = cut;
        }
    }
    insertion_sort(v, first, last, less);
}

/// `std::sort(v.begin(), v.end(), less)`.
pub fn sort<E: Copy>(v: &mut [E], less: &impl Fn(&E, &E) -> bool) {
    if v.len() > 1 {
        introsort_loop(v, 0, v.len(), 2 * lg(v.len()), less);
        final_insertion_sort(v, 0, v.len(), less);
    }
}

/// `std::partial_sort(v.begin(), v.begin() + middle, v.end(), less)`.
pub fn partial_sort<E: Copy>(v: &mut [E], middle: usize, less: &impl Fn(&E, &E) -> bool) {
    heap_select(v, 0, middle, v.len(), less);
    sort_heap(v, 0, middle, less);
}

fn introsort_loop<E: Copy>(
    v: &mut [E],
    first: usize,
    mut last: usize,
    mut depth: usize,
    less: &impl Fn(&E, &E) -> bool,
) {
    while last - first > THRESHOLD {
        if depth == 0 {
            heap_select(v, first, last, last, less);
            sort_heap(v, first, last, less);
            return;
        }
        depth -= 1;
        let cut = unguarded_partition_pivot(v, first, last, less);
        introsort_loop(v, cut, last, depth, less);
        last = cut;
    }
}

fn final_insertion_sort<E: Copy>(
    v: &mut [E],
    first: usize,
    last: usize,
    less: &impl Fn(&E, &E) -> bool,
) {
    if last - first > THRESHOLD {
        insertion_sort(v, first, first + THRESHOLD, less);
        for i in first + THRESHOLD..last {
            unguarded_linear_insert(v, i, less);
        }
    } else {
        insertion_sort(v, first, last, less);
    }
}

fn insertion_sort<E: Copy>(v: &mut [E], first: usize, last: usize, less: &impl Fn(&E, &E) -> bool) {
    if first == last {
        return;
    }
    for i in first + 1..last {
        if less(&v[i], &v[first]) {
            let val = v[i];
            v.copy_within(first..i, first + 1);
            v[first] = val;
        } else {
            unguarded_linear_insert(v, i, less);
        }
    }
}

fn unguarded_linear_insert<E: Copy>(v: &mut [E], mut last: usize, less: &impl Fn(&E, &E) -> bool) {
    let val = v[last];
    let mut next = last - 1;
    while less(&val, &v[next]) {
        v[last] = v[next];
        last = next;
        next -= 1;
    }
    v[last] = val;
}

fn move_median_to_first<E: Copy>(
    v: &mut [E],
    result: usize,
    a: usize,
    b: usize,
    c: usize,
    less: &impl Fn(&E, &E) -> bool,
) {
    let pick = if less(&v[a], &v[b]) {
        if less(&v[b], &v[c]) {
            b
        } else if less(&v[a], &v[c]) {
            c
        } else {
            a
        }
    } else if less(&v[a], &v[c]) {
        a
    } else if less(&v[b], &v[c]) {
        c
    } else {
        b
    };
    v.swap(result, pick);
}

fn unguarded_partition<E: Copy>(
    v: &mut [E],
    mut first: usize,
    mut last: usize,
    pivot: usize,
    less: &impl Fn(&E, &E) -> bool,
) -> usize {
    loop {
        while less(&v[first], &v[pivot]) {
            first += 1;
        }
        last -= 1;
        while less(&v[pivot], &v[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

fn unguarded_partition_pivot<E: Copy>(
    v: &mut [E],
    first: usize,
    last: usize,
    less: &impl Fn(&E, &E) -> bool,
) -> usize {
    let mid = first + (last - first) / 2;
    move_median_to_first(v, first, first + 1, mid, last - 1, less);
    unguarded_partition(v, first + 1, last, first, less)
}

// --- heaps (bits/stl_heap.h), over v[first..] with indices relative to `first` ----------------

fn adjust_heap<E: Copy>(
    v: &mut [E],
    first: usize,
    mut hole: usize,
    len: usize,
    value: E,
    less: &impl Fn(&E, &E) -> bool,
) {
    let top = hole;
    let mut child = hole;
    while len > 0 && child < (len - 1) / 2 {
        child = 2 * (child + 1);
        if less(&v[first + child], &v[first + child - 1]) {
            child -= 1;
        }
        v[first + hole] = v[first + child];
        hole = child;
    }
    if len & 1 == 0 && len >= 2 && child == (len - 2) / 2 {
        child = 2 * (child + 1);
        v[first + hole] = v[first + child - 1];
        hole = child - 1;
    }
    // __push_heap
    while hole > top {
        let parent = (hole - 1) / 2;
        if !less(&v[first + parent], &value) {
            break;
        }
        v[first + hole] = v[first + parent];
        hole = parent;
    }
    v[first + hole] = value;
}

fn make_heap<E: Copy>(v: &mut [E], first: usize, last: usize, less: &impl Fn(&E, &E) -> bool) {
    let len = last - first;
    if len < 2 {
        return;
    }
    let mut parent = (len - 2) / 2;
    loop {
        let value = v[first + parent];
        adjust_heap(v, first, parent, len, value, less);
        if parent == 0 {
            return;
        }
        parent -= 1;
    }
}

fn pop_heap<E: Copy>(
    v: &mut [E],
    first: usize,
    last: usize,
    result: usize,
    less: &impl Fn(&E, &E) -> bool,
) {
    let value = v[result];
    v[result] = v[first];
    adjust_heap(v, first, 0, last - first, value, less);
}

fn heap_select<E: Copy>(
    v: &mut [E],
    first: usize,
    middle: usize,
    last: usize,
    less: &impl Fn(&E, &E) -> bool,
) {
    make_heap(v, first, middle, less);
    for i in middle..last {
        if less(&v[i], &v[first]) {
            pop_heap(v, first, middle, i, less);
        }
    }
}

fn sort_heap<E: Copy>(v: &mut [E], first: usize, mut last: usize, less: &impl Fn(&E, &E) -> bool) {
    while last - first > 1 {
        last -= 1;
        pop_heap(v, first, last, last, less);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn largest(x: &(f32, i64), y: &(f32, i64)) -> bool {
        (x.0.is_nan() && !y.0.is_nan()) || x.0 > y.0
    }

    fn ties(n: usize) -> Vec<(f32, i64)> {
        (0..n).map(|i| (0.0, i as i64)).collect()
    }

    #[test]
    fn ties_follow_libstdcxx_moves() {
        // upstream torch.topk(torch.zeros(4), 2) -> indices [2, 3]; zeros(8), 3 -> [6, 5, 4]
        let mut v = ties(4);
        nth_element(&mut v, 1, &largest);
        sort(&mut v[..1], &largest);
        assert_eq!(v[..2].iter().map(|e| e.1).collect::<Vec<_>>(), [2, 3]);
        let mut v = ties(8);
        nth_element(&mut v, 2, &largest);
        sort(&mut v[..2], &largest);
        assert_eq!(v[..3].iter().map(|e| e.1).collect::<Vec<_>>(), [6, 5, 4]);
        // zeros(200), 5 -> [135, 132, 133, 134, 131] (nth_element: 5 * 64 > 200)
        let mut v = ties(200);
        nth_element(&mut v, 4, &largest);
        sort(&mut v[..4], &largest);
        assert_eq!(
            v[..5].iter().map(|e| e.1).collect::<Vec<_>>(),
            [135, 132, 133, 134, 131]
        );
        // zeros(200), 3 takes the partial_sort path (3 * 64 <= 200): [0, 1, 2]
        let mut v = ties(200);
        partial_sort(&mut v, 3, &largest);
        assert_eq!(v[..3].iter().map(|e| e.1).collect::<Vec<_>>(), [0, 1, 2]);
    }

    #[test]
    fn sorts_like_a_sort() {
        let mut v: Vec<(f32, i64)> = (0..100).map(|i| (((i * 37) % 101) as f32, i)).collect();
        sort(&mut v, &largest);
        assert!(v.windows(2).all(|w| w[0].0 >= w[1].0));
    }
}
