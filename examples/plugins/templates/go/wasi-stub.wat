;; What a Go plugin gets for WASI: nothing. Go's runtime for GOOS=wasip1 imports WASI preview1
;; functions (the clock, random bytes, stdout and stderr, arguments, environment, preopened
;; directories); `wasm-tools component new --adapt wasi_snapshot_preview1=wasi-stub.wat` puts
;; these stubs in their place instead of the preview1 adapter, so the component imports no WASI
;; at all and needs no WASI grant (as `--stub-wasi` does for JavaScript and Python).
;;
;; Each stub answers as a machine with nothing on it would, never as one with a clock:
;;   arguments, environment     none
;;   the clock                  1970-01-01, a microsecond later at each reading: it moves, as
;;                              the runtime needs, and says nothing of the time (take that
;;                              from `ReceivedAtMs`)
;;   random bytes               ENOSYS: the runtime seeds its maps from that clock
;;   stdout, stderr             written to nowhere (a panic's message is lost; the host sees the trap)
;;   any other file descriptor  EBADF: no file, no preopened directory
;;   waiting (poll_oneoff)      ENOSYS: a goroutine that sleeps or waits makes the runtime
;;                              throw, a trap, rather than spin until the deadline
;;   exit (after a panic)       a trap: the handler's on_error applies
(module
  (import "env" "memory" (memory 0))

  (func (export "args_sizes_get") (param $count i32) (param $size i32) (result i32)
    (i32.store (local.get $count) (i32.const 0))
    (i32.store (local.get $size) (i32.const 0))
    (i32.const 0))
  (func (export "args_get") (param i32 i32) (result i32)
    (i32.const 0))
  (func (export "environ_sizes_get") (param $count i32) (param $size i32) (result i32)
    (i32.store (local.get $count) (i32.const 0))
    (i32.store (local.get $size) (i32.const 0))
    (i32.const 0))
  (func (export "environ_get") (param i32 i32) (result i32)
    (i32.const 0))

  ;; Every clock, in nanoseconds: never 0 (the runtime refuses a clock at 0 as it starts), and
  ;; never the same twice (a span the runtime measures is never empty).
  (global $now (mut i64) (i64.const 0))
  (func (export "clock_time_get") (param $id i32) (param $precision i64) (param $time i32) (result i32)
    (global.set $now (i64.add (global.get $now) (i64.const 1000)))
    (i64.store (local.get $time) (global.get $now))
    (i32.const 0))
  ;; Called by the bindings' allocator around a garbage collection, for the real adapter, whose
  ;; clock is an import a `cabi_realloc` may not call: nothing to do here.
  (func (export "adapter_monotonic_clock_set_paused") (param i32))
  (func (export "random_get") (param i32 i32) (result i32)
    (i32.const 52))                                      ;; ENOSYS
  (func (export "poll_oneoff") (param i32 i32 i32 i32) (result i32)
    (i32.const 52))                                      ;; ENOSYS
  (func (export "sched_yield") (result i32)
    (i32.const 0))
  (func (export "proc_exit") (param i32)
    unreachable)

  ;; stdout and stderr: every byte counted as written, none kept.
  (func (export "fd_write") (param $fd i32) (param $iovs i32) (param $count i32) (param $written i32) (result i32)
    (local $total i32)
    (if (i32.or (i32.lt_u (local.get $fd) (i32.const 1)) (i32.gt_u (local.get $fd) (i32.const 2)))
      (then (return (i32.const 8))))                     ;; EBADF
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $count)))
        (local.set $total (i32.add (local.get $total) (i32.load offset=4 (local.get $iovs))))
        (local.set $iovs (i32.add (local.get $iovs) (i32.const 8)))
        (local.set $count (i32.sub (local.get $count) (i32.const 1)))
        (br $next)))
    (i32.store (local.get $written) (local.get $total))
    (i32.const 0))
  (func (export "fd_close") (param i32) (result i32)
    (i32.const 8))                                       ;; EBADF
  (func (export "fd_fdstat_get") (param i32 i32) (result i32)
    (i32.const 8))
  (func (export "fd_fdstat_set_flags") (param i32 i32) (result i32)
    (i32.const 8))
  (func (export "fd_prestat_get") (param i32 i32) (result i32)
    (i32.const 8))                                       ;; no preopened directory
  (func (export "fd_prestat_dir_name") (param i32 i32 i32) (result i32)
    (i32.const 8))

  ;; The rest of WASI preview1, so that a plugin whose packages refer to files or sockets still
  ;; builds (wasm-tools keeps only the functions the plugin imports): no file descriptor exists.
  (func (export "fd_advise") (param i32 i64 i64 i32) (result i32) (i32.const 8))
  (func (export "fd_allocate") (param i32 i64 i64) (result i32) (i32.const 8))
  (func (export "fd_datasync") (param i32) (result i32) (i32.const 8))
  (func (export "fd_fdstat_set_rights") (param i32 i64 i64) (result i32) (i32.const 8))
  (func (export "fd_filestat_get") (param i32 i32) (result i32) (i32.const 8))
  (func (export "fd_filestat_set_size") (param i32 i64) (result i32) (i32.const 8))
  (func (export "fd_filestat_set_times") (param i32 i64 i64 i32) (result i32) (i32.const 8))
  (func (export "fd_pread") (param i32 i32 i32 i64 i32) (result i32) (i32.const 8))
  (func (export "fd_pwrite") (param i32 i32 i32 i64 i32) (result i32) (i32.const 8))
  (func (export "fd_read") (param i32 i32 i32 i32) (result i32) (i32.const 8))
  (func (export "fd_readdir") (param i32 i32 i32 i64 i32) (result i32) (i32.const 8))
  (func (export "fd_renumber") (param i32 i32) (result i32) (i32.const 8))
  (func (export "fd_seek") (param i32 i64 i32 i32) (result i32) (i32.const 8))
  (func (export "fd_sync") (param i32) (result i32) (i32.const 8))
  (func (export "fd_tell") (param i32 i32) (result i32) (i32.const 8))
  (func (export "path_create_directory") (param i32 i32 i32) (result i32) (i32.const 8))
  (func (export "path_filestat_get") (param i32 i32 i32 i32 i32) (result i32) (i32.const 8))
  (func (export "path_filestat_set_times") (param i32 i32 i32 i32 i64 i64 i32) (result i32) (i32.const 8))
  (func (export "path_link") (param i32 i32 i32 i32 i32 i32 i32) (result i32) (i32.const 8))
  (func (export "path_open") (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32) (i32.const 8))
  (func (export "path_readlink") (param i32 i32 i32 i32 i32 i32) (result i32) (i32.const 8))
  (func (export "path_remove_directory") (param i32 i32 i32) (result i32) (i32.const 8))
  (func (export "path_rename") (param i32 i32 i32 i32 i32 i32) (result i32) (i32.const 8))
  (func (export "path_symlink") (param i32 i32 i32 i32 i32) (result i32) (i32.const 8))
  (func (export "path_unlink_file") (param i32 i32 i32) (result i32) (i32.const 8))
  (func (export "sock_accept") (param i32 i32 i32) (result i32) (i32.const 8))
  (func (export "sock_recv") (param i32 i32 i32 i32 i32 i32) (result i32) (i32.const 8))
  (func (export "sock_send") (param i32 i32 i32 i32 i32) (result i32) (i32.const 8))
  (func (export "sock_shutdown") (param i32 i32) (result i32) (i32.const 8))
  (func (export "clock_res_get") (param i32 i32) (result i32) (i32.const 52))
  (func (export "proc_raise") (param i32) (result i32) (i32.const 52))
)
