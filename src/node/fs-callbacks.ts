// The few node:fs calls a lint makes, as promises over fs's callback functions: loading
// node:fs/promises costs ~5-10 ms (it loads readline, the fs watchers and streams), more
// than a small lint spends reading (bench:cli). Same errors (code, message) as fs/promises.
import { readdir, readFile, stat, writeFile, type Dirent, type Stats } from "node:fs";

function settle<T>(resolve: (value: T) => void, reject: (error: Error) => void) {
  return (error: Error | null, value: T) => (error ? reject(error) : resolve(value));
}

export function statPath(path: string): Promise<Stats> {
  return new Promise((resolve, reject) => stat(path, settle(resolve, reject)));
}

export function readBytes(path: string): Promise<Buffer> {
  return new Promise((resolve, reject) => readFile(path, settle(resolve, reject)));
}

export function readEntries(dir: string): Promise<Dirent[]> {
  return new Promise((resolve, reject) => readdir(dir, { withFileTypes: true }, settle(resolve, reject)));
}

export function writeText(path: string, text: string): Promise<void> {
  return new Promise((resolve, reject) => writeFile(path, text, (error) => (error ? reject(error) : resolve())));
}
