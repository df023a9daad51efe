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
//! - the threads are libtorch's own OpenMP team where the process has one ([`omp`]): the
//!   blocks run inside a `GOMP_parallel` region, exactly as ATen's `parallel_for` runs its
//!   own, on the threads ATen's ops (and MKL's GEMM) just used. A second team would compete
//!   with them for the cores: after an ATen op libgomp's threads spin for milliseconds
//!   before they sleep, and a worker of ours woken meanwhile shares a core with one of them
//!   (Intel Xeon, 2 threads: GELU over the 4 M outputs of libtorch's 4096x256 -> 1024 GEMM
//!   took 2.0 ms on our own pool, 1.2 ms on one thread, 0.7 ms in ATen's team;
//!   docs/benchmarks.md "Threads");
//! - where there is no OpenMP team to be had (a process that forked after its parent ran
//!   one, whose libgomp threads the child does not have; a libtorch built without OpenMP),
//!   workers are a persistent pool ([`Pool`]), started on first use and grown to the
//!   largest count asked for, parked on a condition variable between calls. Waking a parked
//!   worker costs a few microseconds where starting a thread cost tens (`cargo run
//!   --release -p rextio-runtime --example par_speed`). A process that forks
//!   (multiprocessing's `fork` start method) gets a new pool at its first parallel call: the
//!   pool is tagged with the process id, and a child never touches its parent's (whose
//!   threads it does not have). Two callers at once (two Python threads in compiled calls)
//!   do not wait for each other: the second runs on scoped threads started for the call, as
//!   every call did before the pool. Parallel calls are still kept to large work (the
//!   thresholds are the cost model's, `linear_cost::PAR_MIN_MACS` and
//!   `linear_cost::PAR_MIN_ELEMENTS`);
//! - results do not depend on the thread count: work is cut into blocks whose bounds depend
//!   on the sizes only (never on the thread count), every block is computed by the same code
//!   whichever thread takes it, and no dot product or row reduction is split across blocks.
//!   One thread computes the same blocks, in order.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

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
    if !omp::run(threads, &work) {
        on_pool(threads - 1, &work);
    }
}

/// Runs `work` on the calling thread and on `helpers` workers of our own pool (scoped
/// threads where the pool is taken).
fn on_pool(helpers: usize, work: &(dyn Fn() + Sync)) {
    match Pool::get() {
        Some(pool) => pool.run(helpers, work),
        None => on_scoped_threads(helpers, work),
    }
}

/// libtorch's OpenMP team: libgomp's `GOMP_parallel`, the entry point `#pragma omp parallel`
/// compiles to, found in the process (libtorch loads libgomp; Python's `import torch`
/// makes it global).
mod omp {
    use std::ffi::{c_uint, c_void};
    use std::sync::{Mutex, OnceLock, PoisonError};

    type Parallel =
        unsafe extern "C" fn(unsafe extern "C" fn(*mut c_void), *mut c_void, c_uint, c_uint);

    /// `GOMP_parallel`, where the process has it.
    fn entry() -> Option<Parallel> {
        static ENTRY: OnceLock<Option<Parallel>> = OnceLock::new();
        *ENTRY.get_or_init(|| {
            if std::env::var_os(super::OWN_POOL_ENV).is_some_and(|v| v == "1") {
                return None;
            }
            let sym = lookup(c"GOMP_parallel");
            if sym.is_null() {
                return None;
            }
            // SAFETY: libgomp's `GOMP_parallel(void (*fn)(void *), void *data, unsigned
            // num_threads, unsigned flags)`, the ABI every GCC-compiled OpenMP region calls.
            Some(unsafe { std::mem::transmute::<*mut c_void, Parallel>(sym) })
        })
    }

    /// The address of `name` among the symbols the process has loaded globally, or null.
    /// `dlsym` is declared here rather than taken from the `libc` crate so that the crates
    /// rextio-torch emits, which carry this file, need no other dependency.
    #[cfg(target_os = "linux")]
    fn lookup(name: &std::ffi::CStr) -> *mut c_void {
        extern "C" {
            fn dlsym(handle: *mut c_void, symbol: *const std::ffi::c_char) -> *mut c_void;
        }
        // glibc's and musl's RTLD_DEFAULT.
        let rtld_default = std::ptr::null_mut();
        // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only reads.
        unsafe { dlsym(rtld_default, name.as_ptr()) }
    }

    #[cfg(not(target_os = "linux"))]
    fn lookup(_name: &std::ffi::CStr) -> *mut c_void {
        std::ptr::null_mut()
    }

    /// `GOMP_parallel` where this process runs its parallel passes in libtorch's OpenMP team:
    /// never in a forked child.
    fn team_entry() -> Option<Parallel> {
        super::init();
        if super::forked() {
            None
        } else {
            entry()
        }
    }

    /// Whether this process runs its parallel passes in libtorch's OpenMP team.
    pub(super) fn available() -> bool {
        team_entry().is_some()
    }

    struct Region<'a> {
        work: &'a (dyn Fn() + Sync),
        panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
    }

    /// One team member's part: `work` (which takes blocks until none is left), with a panic
    /// caught here (it must not unwind through libgomp) and kept for the caller.
    unsafe extern "C" fn member(data: *mut c_void) {
        // SAFETY: `data` is the `Region` that `run` passes and outlives the region.
        let region = unsafe { &*(data as *const Region<'_>) };
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(region.work));
        if let Err(panic) = outcome {
            let mut first = region.panic.lock().unwrap_or_else(PoisonError::into_inner);
            first.get_or_insert(panic);
        }
    }

    /// Runs `work` on up to `threads` threads of libtorch's team (the calling thread one of
    /// them), returning when all have finished and re-raising the first panic; `false`
    /// (nothing run) where this process has no team to use. A fork's child never uses its
    /// parent's team: libgomp's threads are not in the child ([`super::forked`]).
    pub(super) fn run(threads: usize, work: &(dyn Fn() + Sync)) -> bool {
        let Some(parallel) = team_entry() else {
            return false;
        };
        let region = Region {
            work,
            panic: Mutex::new(None),
        };
        let threads = c_uint::try_from(threads).unwrap_or(c_uint::MAX);
        // SAFETY: `member` only reads `region`, which lives until `GOMP_parallel` returns,
        // and returns (it catches every panic); `GOMP_parallel` returns after every member
        // has finished.
        unsafe {
            parallel(
                member,
                &region as *const Region<'_> as *mut c_void,
                threads,
                0,
            )
        };
        if let Some(panic) = region
            .panic
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
        {
            std::panic::resume_unwind(panic);
        }
        true
    }
}

/// Set in a forked child by the `pthread_atfork` handler [`init`] registers.
static FORKED: AtomicBool = AtomicBool::new(false);

/// The process [`init`] ran in, kept only where the fork handler could not be registered:
/// then [`forked`] compares process ids instead (a system call per question).
static PID_IF_NO_HANDLER: std::sync::OnceLock<u32> = std::sync::OnceLock::new();

extern "C" fn note_fork_child() {
    FORKED.store(true, Ordering::Relaxed);
}

/// Notes this process as the one that loaded the runtime (the Python module does so at
/// import), so that a child forked from it later knows it is one ([`forked`]): registers a
/// `pthread_atfork` child handler, once. Cheap after the first call (one atomic load).
pub fn init() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if !register_fork_handler() {
            PID_IF_NO_HANDLER.get_or_init(std::process::id);
        }
    });
}

/// `pthread_atfork(NULL, NULL, note_fork_child)`, declared here (as `dlsym` is, in [`omp`]) so
/// that the emitted crates that carry this file need no other dependency.
#[cfg(unix)]
fn register_fork_handler() -> bool {
    extern "C" {
        fn pthread_atfork(
            prepare: Option<extern "C" fn()>,
            parent: Option<extern "C" fn()>,
            child: Option<extern "C" fn()>,
        ) -> std::ffi::c_int;
    }
    // SAFETY: registers a handler that only stores to an atomic, which is async-signal-safe
    // as a fork's child handler must be.
    unsafe { pthread_atfork(None, None, Some(note_fork_child)) == 0 }
}

#[cfg(not(unix))]
fn register_fork_handler() -> bool {
    true
}

/// Whether this process is a child forked after the runtime was loaded: libgomp's threads
/// (libtorch's OpenMP team, and MKL's) are not in the child, and libgomp waits for them
/// forever at its next parallel region once the parent has run one. A child therefore runs
/// its parallel passes on our own pool, and its products on the crate's GEMM
/// (`linear_cost::products`). Eager's own parallel ops hang there too, as PyTorch documents.
/// An atomic load, not a system call: products ask it per call.
pub fn forked() -> bool {
    FORKED.load(Ordering::Relaxed)
        || PID_IF_NO_HANDLER
            .get()
            .is_some_and(|&pid| pid != std::process::id())
}

/// Set to `1`, parallel passes run on our own pool even where libtorch's OpenMP team is to
/// be had (for comparing the two, and for tests of the pool).
pub const OWN_POOL_ENV: &str = "REXTIO_TORCH_OWN_POOL";

/// Which threads this process's parallel passes run on: `openmp` (libtorch's team) or
/// `pool` (our own).
pub fn team() -> &'static str {
    if omp::available() {
        "openmp"
    } else {
        "pool"
    }
}

/// Runs `work` on the calling thread and on `helpers` threads started for this call (what
/// every parallel call did before the pool; now only when the pool is not to be had).
fn on_scoped_threads(helpers: usize, work: &(dyn Fn() + Sync)) {
    std::thread::scope(|scope| {
        for _ in 0..helpers {
            scope.spawn(work);
        }
        work();
    });
}

/// The job a parallel call hands its pool's workers: the call's `work` closure, whose
/// lifetime is erased. Sound because [`Pool::run`] does not return (nor unwind) before every
/// worker that took the job has finished it, and no worker takes it after that.
#[derive(Clone, Copy)]
struct Job(*const (dyn Fn() + Sync + 'static));

// SAFETY: the closure behind the pointer is `Sync` (shared by reference between threads),
// and it outlives every use (see `Job`).
unsafe impl Send for Job {}

/// What the caller and the workers share, under one lock.
struct State {
    /// Bumped once per job: a worker takes a seat of the job whose generation it has not seen.
    generation: u64,
    job: Option<Job>,
    /// Workers that may still join the current job.
    seats: usize,
    /// Workers that joined the current job and have not finished it.
    running: usize,
    /// The first panic of a worker in the current job, re-raised on the caller.
    panic: Option<Box<dyn std::any::Any + Send>>,
    /// Workers started so far.
    workers: usize,
}

struct Shared {
    state: Mutex<State>,
    /// Signalled when a job is posted.
    posted: Condvar,
    /// Signalled when the last running worker finishes.
    finished: Condvar,
}

/// The persistent workers of this process ([`for_each`]).
struct Pool {
    pid: u32,
    shared: Arc<Shared>,
    /// Held by the one caller whose job the pool runs; another caller meanwhile uses scoped
    /// threads instead of waiting.
    busy: Mutex<()>,
}

/// This process's pool, leaked once made (a fork's child makes its own and leaves its
/// parent's alone: its threads are not in the child, and its locks may be held there).
static POOL: AtomicPtr<Pool> = AtomicPtr::new(std::ptr::null_mut());

impl Pool {
    /// This process's pool, made at the first call of this process (`None` only if two
    /// callers race to make it and this one lost: it then uses scoped threads once).
    fn get() -> Option<&'static Pool> {
        let pid = std::process::id();
        let current = POOL.load(Ordering::Acquire);
        // SAFETY: a non-null POOL points at a leaked `Pool`, never freed.
        if let Some(pool) = unsafe { current.as_ref() } {
            if pool.pid == pid {
                return Some(pool);
            }
        }
        let fresh = Box::into_raw(Box::new(Pool {
            pid,
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    generation: 0,
                    job: None,
                    seats: 0,
                    running: 0,
                    panic: None,
                    workers: 0,
                }),
                posted: Condvar::new(),
                finished: Condvar::new(),
            }),
            busy: Mutex::new(()),
        }));
        match POOL.compare_exchange(current, fresh, Ordering::AcqRel, Ordering::Acquire) {
            // SAFETY: `fresh` was just leaked from a Box; the parent's pool (if any) stays
            // leaked, untouched.
            Ok(_) => Some(unsafe { &*fresh }),
            Err(_) => {
                // SAFETY: `fresh` was never published; it is ours to free.
                drop(unsafe { Box::from_raw(fresh) });
                None
            }
        }
    }

    /// Runs `work` on the calling thread and on `helpers` workers of the pool, returning
    /// when all have finished (re-raising the first panic of any of them).
    fn run(&self, helpers: usize, work: &(dyn Fn() + Sync)) {
        let Ok(_busy) = self.busy.try_lock() else {
            return on_scoped_threads(helpers, work);
        };
        let erased: *const (dyn Fn() + Sync + '_) = work;
        // SAFETY: only the lifetime is erased (see `Job`): the guard below waits for every
        // worker that took the job before this frame can be left.
        let job = Job(unsafe {
            std::mem::transmute::<*const (dyn Fn() + Sync + '_), *const (dyn Fn() + Sync + 'static)>(
                erased,
            )
        });
        {
            let mut state = lock(&self.shared.state);
            while state.workers < helpers {
                state.workers += 1;
                let shared = Arc::clone(&self.shared);
                let seen = state.generation;
                std::thread::Builder::new()
                    .name("rextio-torch-worker".into())
                    .spawn(move || worker(&shared, seen))
                    .expect("rextio-torch: cannot start a worker thread");
            }
            state.generation += 1;
            state.job = Some(job);
            state.seats = helpers;
            state.panic = None;
        }
        self.shared.posted.notify_all();
        // Closes the job and waits for its workers even if `work` panics on this thread.
        struct Close<'a>(&'a Shared);
        impl Drop for Close<'_> {
            fn drop(&mut self) {
                let mut state = lock(&self.0.state);
                state.seats = 0;
                while state.running > 0 {
                    state = self
                        .0
                        .finished
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                state.job = None;
            }
        }
        let close = Close(&self.shared);
        work();
        drop(close);
        if let Some(panic) = lock(&self.shared.state).panic.take() {
            std::panic::resume_unwind(panic);
        }
    }
}

/// A worker's life: wait for a job it has not seen, take a seat if one is left, run it.
fn worker(shared: &Shared, mut seen: u64) {
    loop {
        let job = {
            let mut state = lock(&shared.state);
            loop {
                if state.generation != seen {
                    seen = state.generation;
                    if state.seats > 0 {
                        if let Some(job) = state.job {
                            state.seats -= 1;
                            state.running += 1;
                            break job;
                        }
                    }
                }
                state = shared
                    .posted
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        };
        // SAFETY: the caller waits for `running` to fall to 0 before its closure goes away
        // (`Job`).
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe { (*job.0)() }));
        let mut state = lock(&shared.state);
        if let Err(panic) = outcome {
            state.panic.get_or_insert(panic);
        }
        state.running -= 1;
        if state.running == 0 {
            shared.finished.notify_all();
        }
    }
}

/// The state's lock; a panic never happens while it is held (jobs run outside it), so a
/// poisoned lock still holds consistent state.
fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
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

    #[test]
    fn the_pool_is_reused_and_grows_only_to_the_largest_count() {
        for _ in 0..200 {
            let data: Vec<Mutex<u32>> = (0..64).map(|_| Mutex::new(1)).collect();
            let next = std::sync::atomic::AtomicUsize::new(0);
            on_pool(2, &|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(v) = data.get(i) else { break };
                *v.lock().unwrap() *= 2;
            });
            assert!(data.iter().all(|v| *v.lock().unwrap() == 2));
        }
        let pool = Pool::get().expect("the pool exists after a parallel call");
        // Other tests of this binary run beside this one: at most their largest count too.
        assert!(lock(&pool.shared.state).workers <= 4);
    }

    #[test]
    fn a_panic_in_any_block_reaches_the_caller_and_the_pool_still_works() {
        let caught = std::panic::catch_unwind(|| {
            let mut data = vec![0u8; 64];
            for_each_block(&mut data, 1, 2, |i, _| {
                // Slow blocks, so that the other thread takes some, one of which panics.
                std::thread::sleep(std::time::Duration::from_micros(200));
                assert!(i != 40, "block 40 fails");
            });
        });
        assert!(caught.is_err());
        let mut data = vec![0usize; 64];
        for_each_block(&mut data, 1, 2, |i, block| block[0] = i);
        assert_eq!(data, (0..64).collect::<Vec<_>>());
    }

    #[test]
    fn passes_run_in_libtorchs_openmp_team_on_several_threads() {
        // This binary links libtorch, which loads libgomp.
        if std::env::var_os(OWN_POOL_ENV).is_none() {
            assert_eq!(team(), "openmp");
        }
        let ids = Mutex::new(std::collections::HashSet::new());
        let mut data = vec![0u8; 16];
        for_each_block(&mut data, 1, 2, |_, _| {
            std::thread::sleep(std::time::Duration::from_millis(2));
            lock_set(&ids).insert(std::thread::current().id());
        });
        assert_eq!(lock_set(&ids).len(), 2, "two threads took blocks");
    }

    fn lock_set<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
        m.lock().unwrap_or_else(PoisonError::into_inner)
    }

    #[test]
    fn callers_on_several_threads_at_once_each_get_their_own_blocks() {
        std::thread::scope(|scope| {
            for caller in 0..4usize {
                scope.spawn(move || {
                    for _ in 0..50 {
                        let mut data = vec![0usize; 97];
                        for_each_block(&mut data, 7, 2, |i, block| {
                            block.iter_mut().for_each(|v| *v = caller * 1000 + i)
                        });
                        let expected: Vec<usize> = (0..97).map(|j| caller * 1000 + j / 7).collect();
                        assert_eq!(data, expected);
                    }
                });
            }
        });
    }
}
