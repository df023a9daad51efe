//! Intra-op parallelism: how many threads a call may use (torch's own setting,
//! [`torch_threads`]) and the one way work is shared among them ([`for_each_block`]).
//!
//! The policy, one with torch's so the two never oversubscribe the machine:
//!
//! - a call uses at most `torch.get_num_threads()` threads, read at every parallel call (so
//!   `torch.set_num_threads` at run time takes effect at the next call), the calling thread
//!   included;
//! - our worker threads compute on plain slices only: they call no libtorch op, and they
//!   exist only inside [`for_each_block`], which returns after every worker has finished; a
//!   libtorch op a call runs (a long product's GEMM, which is itself parallel under the
//!   same setting) runs on the calling thread while no worker of ours exists;
//! - workers are scoped threads (`std::thread::scope`), started per parallel call: no pool
//!   outlives a call, so a process that forks (multiprocessing's `fork` start method) hands
//!   its child nothing to rebuild. Starting them costs some microseconds each, which is why
//!   only large calls go parallel (the thresholds are the cost model's,
//!   `linear_cost::PAR_MIN_MACS` and `linear_cost::PAR_MIN_ELEMENTS`);
//! - results do not depend on the thread count: work is cut into blocks whose bounds depend
//!   on the sizes only (never on the thread count), every block is computed by the same code
//!   whichever thread takes it, and no dot product or row reduction is split across blocks.
//!   One thread computes the same blocks, in order.

use std::cell::Cell;
use std::sync::Mutex;

thread_local! {
    /// How many threads this thread's last [`for_each`] ran on ([`last_threads`]).
    static LAST: Cell<usize> = const { Cell::new(0) };
}

/// How many threads the last parallel pass started from this thread ran on (0 before any),
/// for tests that a large call did go parallel.
pub fn last_threads() -> usize {
    LAST.with(Cell::get)
}

/// The number of threads torch's intra-op parallelism uses on this thread
/// (`torch.get_num_threads()`), at least 1.
pub fn torch_threads() -> usize {
    usize::try_from(tch::get_num_threads()).unwrap_or(1).max(1)
}

/// Calls `f(i, block)` for every block `i` of `data` cut into blocks of `block_len` elements
/// (the last one shorter), on up to `threads` threads (the calling thread one of them).
/// Threads take the next block in turn; which thread computes a block never changes its
/// result, since `f` sees only the block and its index.
pub fn for_each_block<T: Send>(
    data: &mut [T],
    block_len: usize,
    threads: usize,
    f: impl Fn(usize, &mut [T]) + Sync,
) {
    let blocks = data.chunks_mut(block_len.max(1)).enumerate();
    for_each(blocks, threads, |(i, block)| f(i, block));
}

/// Calls `f` on every item of `items` (blocks of work, each independent of the others), on
/// up to `threads` threads, the calling thread one of them: each thread takes the next item
/// until none is left. With one thread (or one item), in order on the calling thread.
pub fn for_each<I>(items: I, threads: usize, f: impl Fn(I::Item) + Sync)
where
    I: Iterator + Send,
    I::Item: Send,
{
    let threads = threads
        .min(items.size_hint().1.unwrap_or(usize::MAX))
        .max(1);
    LAST.with(|last| last.set(threads));
    if threads == 1 {
        items.for_each(f);
        return;
    }
    let queue = Mutex::new(items);
    let work = || loop {
        // A poisoned lock means another thread panicked in `f`: the scope re-raises that.
        let next = match queue.lock() {
            Ok(mut q) => q.next(),
            Err(_) => None,
        };
        match next {
            Some(item) => f(item),
            None => break,
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..threads {
            scope.spawn(work);
        }
        work();
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_block_once_at_any_thread_count() {
        for threads in 1..=5 {
            let mut data = vec![0usize; 103];
            for_each_block(&mut data, 10, threads, |i, block| {
                for v in block.iter_mut() {
                    *v += i + 1;
                }
            });
            let expected: Vec<usize> = (0..103).map(|j| j / 10 + 1).collect();
            assert_eq!(data, expected, "{threads} threads");
        }
    }
}
