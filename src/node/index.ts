// `hcp-bot/node`: what a Node program needs around the core (`hcp-bot`): the Python grammar
// and reading recipe files the way `hcp-bot lint` does.
export { loadPythonLanguage } from "./treesitter.ts";
export { collectInputs, collectPaths, readSources, InputError, type CollectOptions, type Collected } from "./files.ts";
export { ParallelAnalyzer } from "./parallel.ts";
