// Narrowing helpers for JSON we did not produce ourselves (the spec, request bodies).
export type JsonObject = { [key: string]: unknown };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function getString(obj: JsonObject, key: string): string | undefined {
  const v = obj[key];
  return typeof v === "string" ? v : undefined;
}

export function getNumber(obj: JsonObject, key: string): number | undefined {
  const v = obj[key];
  return typeof v === "number" ? v : undefined;
}

export function getBoolean(obj: JsonObject, key: string): boolean | undefined {
  const v = obj[key];
  return typeof v === "boolean" ? v : undefined;
}

export function getObject(obj: JsonObject, key: string): JsonObject | undefined {
  const v = obj[key];
  return isObject(v) ? v : undefined;
}

export function getArray(obj: JsonObject, key: string): unknown[] | undefined {
  const v = obj[key];
  return Array.isArray(v) ? v : undefined;
}
