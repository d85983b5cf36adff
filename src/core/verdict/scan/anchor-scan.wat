;; Finds the lines of a log block that hold one of the verdict's anchors (../anchors.ts), at
;; memory speed. It is the hot loop of the verdict: the same search as the JS regex over
;; ANCHORS, several times faster than V8 runs that alternation. `npm run build:wasm`
;; assembles this file into anchor-scan.wasm.ts; a test checks the two agree.
;;
;; Candidate search is Teddy (Hyperscan's SIMD literal matcher): every anchor belongs to one of
;; 8 buckets (a bit each). For each of the first 3 bytes of an anchor, a 16-entry table indexed
;; by the byte's low nibble and one indexed by its high nibble give the buckets whose anchors
;; may have that byte there. Looking both up for 16 positions at once (i8x16.swizzle) and ANDing
;; over the 3 offsets leaves, per position, the buckets whose 3-byte prefix may start there.
;; Each candidate is then verified byte by byte against the anchors of its buckets.
;;
;; The caller (wasm-scanner.ts) owns the memory layout and passes pointers:
;;   tables:  +0 lo0, +16 hi0, +32 lo1, +48 hi1, +64 lo2, +80 hi2 (nibble → bucket bits),
;;            +96 one 12-byte record per anchor, in ANCHORS order: i32 address of its bytes,
;;            i32 length, i32 bucket bit.
;;   scratch: 16 bytes.
;;   input:   the block, followed by at least 32 readable bytes (the 3 loads read past the end;
;;            what they read there is masked off).
;;   hits:    4 x i32 per line found: line start and index of its "\n" (both counted from the
;;            scan start), anchor index, and the number of "\n" between the scan start and the line.
(module
  (memory (export "memory") 8)

  ;; Newlines from the scan start to where the last scan stopped (its end: a block's line count).
  (global $scannedNewlines (export "scannedNewlines") (mut i32) (i32.const 0))

    ;; 1 when no byte in [p, end) has its high bit set (then byte offsets are UTF-16 offsets).
  (func (export "isAscii") (param $p i32) (param $end i32) (result i32)
    (local $seen v128)
    (block $tail
      (loop $wide
        (br_if $tail (i32.gt_u (i32.add (local.get $p) (i32.const 16)) (local.get $end)))
        (local.set $seen (v128.or (local.get $seen) (v128.load (local.get $p))))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $wide)))
    (block $done
      (loop $narrow
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (if (i32.ge_u (i32.load8_u (local.get $p)) (i32.const 0x80)) (then (return (i32.const 0))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $narrow)))
    (i32.eqz (i8x16.bitmask (local.get $seen))))

  ;; Index of the first anchor (in table order, like a regex alternation) that belongs to one of
  ;; `buckets` and matches at q without crossing end; -1 when none does.
  (func $verify (param $q i32) (param $buckets i32) (param $end i32) (param $tables i32) (param $count i32) (result i32)
    (local $k i32) (local $record i32) (local $bytes i32) (local $length i32) (local $j i32)
    (block $none
      (loop $anchor
        (br_if $none (i32.ge_u (local.get $k) (local.get $count)))
        (local.set $record (i32.add (i32.add (local.get $tables) (i32.const 96)) (i32.mul (local.get $k) (i32.const 12))))
        (local.set $length (i32.load offset=4 (local.get $record)))
        (if (i32.and
              (i32.ne (i32.and (local.get $buckets) (i32.load offset=8 (local.get $record))) (i32.const 0))
              (i32.le_u (i32.add (local.get $q) (local.get $length)) (local.get $end)))
          (then
            (local.set $bytes (i32.load (local.get $record)))
            (local.set $j (i32.const 0))
            (block $mismatch
              (loop $compare
                (if (i32.ge_u (local.get $j) (local.get $length)) (then (return (local.get $k))))
                (br_if $mismatch (i32.ne
                  (i32.load8_u (i32.add (local.get $q) (local.get $j)))
                  (i32.load8_u (i32.add (local.get $bytes) (local.get $j)))))
                (local.set $j (i32.add (local.get $j) (i32.const 1)))
                (br $compare)))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $anchor)))
    (i32.const -1))

  ;; Index of the first "\n" in [q, end), else end.
  (func $lineEnd (param $q i32) (param $end i32) (result i32)
    (local $newlines i32)
    (block $tail
      (loop $wide
        (br_if $tail (i32.gt_u (i32.add (local.get $q) (i32.const 16)) (local.get $end)))
        (local.set $newlines (i8x16.bitmask (i8x16.eq (v128.load (local.get $q)) (i8x16.splat (i32.const 10)))))
        (if (local.get $newlines) (then (return (i32.add (local.get $q) (i32.ctz (local.get $newlines))))))
        (local.set $q (i32.add (local.get $q) (i32.const 16)))
        (br $wide)))
    (block $done
      (loop $narrow
        (br_if $done (i32.ge_u (local.get $q) (local.get $end)))
        (if (i32.eq (i32.load8_u (local.get $q)) (i32.const 10)) (then (return (local.get $q))))
        (local.set $q (i32.add (local.get $q) (i32.const 1)))
        (br $narrow)))
    (local.get $end))

  ;; Scans [p, end), where p starts a line and `newlines` is the count of "\n" before p, and
  ;; records every line holding an anchor (one hit per line: its leftmost anchor). Returns the
  ;; number of hits. It stops after `max` hits: the caller sizes the hits area so that cannot
  ;; happen (a line holding an anchor takes at least 4 bytes) and treats it as a bug.
  (func (export "scan") (param $p i32) (param $end i32) (param $newlines i32) (param $tables i32) (param $count i32)
        (param $hits i32) (param $max i32) (param $scratch i32) (result i32)
    (local $v0 v128) (local $v1 v128) (local $v2 v128) (local $buckets v128) (local $lowNibble v128)
    (local $lo0 v128) (local $hi0 v128) (local $lo1 v128) (local $hi1 v128) (local $lo2 v128) (local $hi2 v128)
    (local $lanes i32) (local $newlineLanes i32) (local $candidates i32) (local $lane i32) (local $q i32)
    (local $anchor i32) (local $lastNewline i32) (local $newlinesBefore i32) (local $below i32) (local $eol i32)
    (local $found i32) (local $start i32)
    (local.set $lowNibble (i8x16.splat (i32.const 15)))
    (local.set $lo0 (v128.load (local.get $tables)))
    (local.set $hi0 (v128.load offset=16 (local.get $tables)))
    (local.set $lo1 (v128.load offset=32 (local.get $tables)))
    (local.set $hi1 (v128.load offset=48 (local.get $tables)))
    (local.set $lo2 (v128.load offset=64 (local.get $tables)))
    (local.set $hi2 (v128.load offset=80 (local.get $tables)))
    (local.set $start (local.get $p))
    (local.set $lastNewline (i32.sub (local.get $p) (i32.const 1)))
    (block $exit
      (loop $block
        (br_if $exit (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $v0 (v128.load (local.get $p)))
        (local.set $v1 (v128.load offset=1 (local.get $p)))
        (local.set $v2 (v128.load offset=2 (local.get $p)))
        (local.set $buckets (v128.and
          (v128.and
            (v128.and (i8x16.swizzle (local.get $lo0) (v128.and (local.get $v0) (local.get $lowNibble)))
                      (i8x16.swizzle (local.get $hi0) (i8x16.shr_u (local.get $v0) (i32.const 4))))
            (v128.and (i8x16.swizzle (local.get $lo1) (v128.and (local.get $v1) (local.get $lowNibble)))
                      (i8x16.swizzle (local.get $hi1) (i8x16.shr_u (local.get $v1) (i32.const 4)))))
          (v128.and (i8x16.swizzle (local.get $lo2) (v128.and (local.get $v2) (local.get $lowNibble)))
                    (i8x16.swizzle (local.get $hi2) (i8x16.shr_u (local.get $v2) (i32.const 4))))))
        ;; Lanes inside the block: all 16 except in the last, partial vector.
        (local.set $lanes
          (if (result i32) (i32.lt_u (i32.sub (local.get $end) (local.get $p)) (i32.const 16))
            (then (i32.sub (i32.shl (i32.const 1) (i32.sub (local.get $end) (local.get $p))) (i32.const 1)))
            (else (i32.const 0xffff))))
        (local.set $newlineLanes (i32.and (local.get $lanes)
          (i8x16.bitmask (i8x16.eq (local.get $v0) (i8x16.splat (i32.const 10))))))
        (local.set $candidates (i32.and (local.get $lanes)
          (i8x16.bitmask (i8x16.ne (local.get $buckets) (i64x2.splat (i64.const 0))))))
        (if (local.get $candidates)
          (then
            (v128.store (local.get $scratch) (local.get $buckets))
            (loop $candidate
              (local.set $lane (i32.ctz (local.get $candidates)))
              (local.set $q (i32.add (local.get $p) (local.get $lane)))
              (local.set $anchor (call $verify (local.get $q)
                (i32.load8_u (i32.add (local.get $scratch) (local.get $lane)))
                (local.get $end) (local.get $tables) (local.get $count)))
              (if (i32.ge_s (local.get $anchor) (i32.const 0))
                (then
                  (local.set $below (i32.and (local.get $newlineLanes)
                    (i32.sub (i32.shl (i32.const 1) (local.get $lane)) (i32.const 1))))
                  (if (local.get $below)
                    (then (local.set $lastNewline (i32.sub (i32.add (local.get $p) (i32.const 31)) (i32.clz (local.get $below))))))
                  (local.set $newlinesBefore (i32.add (local.get $newlines) (i32.popcnt (local.get $below))))
                  (local.set $eol (call $lineEnd (local.get $q) (local.get $end)))
                  (i32.store (local.get $hits) (i32.sub (i32.add (local.get $lastNewline) (i32.const 1)) (local.get $start)))
                  (i32.store offset=4 (local.get $hits) (i32.sub (local.get $eol) (local.get $start)))
                  (i32.store offset=8 (local.get $hits) (local.get $anchor))
                  (i32.store offset=12 (local.get $hits) (local.get $newlinesBefore))
                  (local.set $hits (i32.add (local.get $hits) (i32.const 16)))
                  (local.set $found (i32.add (local.get $found) (i32.const 1)))
                  ;; The rest of this line cannot add a hit: go on after its newline.
                  (local.set $newlines (i32.add (local.get $newlinesBefore) (i32.const 1)))
                  (local.set $lastNewline (local.get $eol))
                  (local.set $p (i32.add (local.get $eol) (i32.const 1)))
                  (if (i32.ge_u (local.get $found) (local.get $max))
                    (then
                      (global.set $scannedNewlines (local.get $newlines))
                      (return (local.get $found))))
                  (br $block)))
              (local.set $candidates (i32.and (local.get $candidates) (i32.sub (local.get $candidates) (i32.const 1))))
              (br_if $candidate (local.get $candidates)))))
        (if (local.get $newlineLanes)
          (then (local.set $lastNewline (i32.sub (i32.add (local.get $p) (i32.const 31)) (i32.clz (local.get $newlineLanes))))))
        (local.set $newlines (i32.add (local.get $newlines) (i32.popcnt (local.get $newlineLanes))))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $block)))
    (global.set $scannedNewlines (local.get $newlines))
    (local.get $found))
)
