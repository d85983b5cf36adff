// `npm run test:stress`: the whole suite, RUNS times in a row (3 by default), while CPU hogs
// keep the load average above LOAD (4 by default) on this machine. A test that depends on
// timing (a fixed sleep, a race between a write and an early answer, a short timeout) fails
// here long before it fails for a user. The hogs are child processes started and stopped
// by PID; each run's time and result are printed, and the exit status is the first failure's.
import { spawn } from "node:child_process";
import { availableParallelism, loadavg } from "node:os";

const runs = Number(process.env.RUNS ?? 3);
const load = Number(process.env.LOAD ?? 4);
const hogCount = Number(process.env.HOGS ?? Math.max(load + 1, availableParallelism() * 2));

const hogs = Array.from({ length: hogCount }, () => spawn(process.execPath, ["-e", "for(;;);"], { stdio: "ignore" }));
const stopHogs = () => {
  for (const hog of hogs) hog.kill("SIGKILL");
};
process.on("exit", stopHogs);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130));

// The load average follows the hogs over about a minute; the suite starts once it is there.
const started = Date.now();
while (loadavg()[0] < load && Date.now() - started < 120_000) await new Promise((r) => setTimeout(r, 2000));
console.log(`test:stress: ${hogs.length} CPU hogs (PIDs ${hogs.map((h) => h.pid).join(", ")}), load ${loadavg()[0].toFixed(1)}`);

// The load is sampled while each run goes, not only at its end (where the suite winds down).
function runSuite() {
  const samples = [];
  const timer = setInterval(() => samples.push(loadavg()[0]), 5000);
  return new Promise((resolve) => {
    spawn("npm", ["test"], { stdio: "inherit", env: process.env }).on("exit", (status) => {
      clearInterval(timer);
      resolve({ status, samples });
    });
  });
}

const results = [];
for (let i = 1; i <= runs; i++) {
  const t0 = Date.now();
  const { status, samples } = await runSuite();
  const seconds = ((Date.now() - t0) / 1000).toFixed(0);
  const min = Math.min(...samples).toFixed(1);
  const mean = (samples.reduce((a, b) => a + b, 0) / Math.max(samples.length, 1)).toFixed(1);
  results.push({ run: i, status, seconds, "load min": min, "load mean": mean });
  console.log(`test:stress: run ${i}/${runs} ${status === 0 ? "passed" : "FAILED"} in ${seconds} s (load while it ran: min ${min}, mean ${mean})`);
  if (status !== 0) break;
}
stopHogs();
console.table(results);
const failed = results.find((r) => r.status !== 0);
process.exit(failed ? failed.status ?? 1 : 0);
