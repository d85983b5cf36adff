// Loaded with --import into a measured child: writes its peak RSS (KiB) to stderr as it exits.
import { writeSync } from "node:fs";
process.on("exit", () => writeSync(2, `\nmaxrss-kib ${process.resourceUsage().maxRSS}\n`));
