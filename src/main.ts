// Process entry point: wires the CLI to stdout/stderr and the exit code.
import { main } from "./cli.ts";
import { processIo } from "./cli/process-io.ts";

process.exitCode = await main(process.argv.slice(2), processIo());
