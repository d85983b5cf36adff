// The Lua scripts of the Redis store. Each runs atomically inside Redis, so a step that must
// not race (a claim, a status change with its indexes, a job's lease) is one script, and two
// replicas sharing one Redis see it happen once. Times come from the caller (ARGV `now`, in
// ms) so the store's injected clock rules expiry as it does in SQLite; Redis's own expiry
// (PX) only collects what nobody reads any more. Keys are built from the prefix inside the
// scripts, so the store wants one Redis (or a primary with replicas), not Redis Cluster.

/**
 * A claim is `SET key "<expiresAtMs> <owner>" NX PX ttl`. When that finds a key, the claim
 * is still granted if its time has passed on the store's clock or the same owner asks again.
 * KEYS[1] claim key; ARGV: now, ttlMs, owner ("" for none). Returns 1 when granted.
 */
export const CLAIM = `
local now = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local value = tostring(now + ttl) .. ' ' .. ARGV[3]
if redis.call('SET', KEYS[1], value, 'NX', 'PX', ttl) then return 1 end
local held = redis.call('GET', KEYS[1])
if held then
  local expires = tonumber(string.match(held, '^(%d+)'))
  local owner = string.match(held, '^%d+ (.*)$') or ''
  if expires > now and not (ARGV[3] ~= '' and owner == ARGV[3]) then return 0 end
end
redis.call('SET', KEYS[1], value, 'PX', ttl)
return 1
`;

/**
 * A smoke request's compare-and-set with its indexes. KEYS: record, active set, active set
 * of the repo, run index (or a placeholder). ARGV: expected old JSON, new JSON, seq, id,
 * active op ("add", "rem" or ""), "1" when a run id is newly bound. Returns 0 when the
 * record changed meanwhile (the caller reads it again).
 */
export const UPDATE_REQUEST = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
local seq = tonumber(ARGV[3])
if ARGV[5] == 'add' then
  redis.call('ZADD', KEYS[2], seq, ARGV[4])
  redis.call('ZADD', KEYS[3], seq, ARGV[4])
elseif ARGV[5] == 'rem' then
  redis.call('ZREM', KEYS[2], ARGV[4])
  redis.call('ZREM', KEYS[3], ARGV[4])
end
if ARGV[6] == '1' then redis.call('ZADD', KEYS[4], seq, ARGV[4]) end
return 1
`;

/**
 * A new smoke request with its indexes. KEYS: seq counter. ARGV: prefix, id, JSON, repo,
 * "repo#pr", login, createdAt ms, and for a record that expires its expiry in ms and the time
 * left until then ("" for none): the record then carries PX, and `req:expiring` (members `id|repo#pr|repo|login`, none of which holds a `|`) names the
 * indexes SWEEP_EXPIRED takes it out of. Returns the request's sequence number.
 */
export const CREATE_REQUEST = `
local p = ARGV[1]
local seq = redis.call('INCR', KEYS[1])
if ARGV[8] ~= '' then
  redis.call('SET', p .. 'req:' .. ARGV[2], ARGV[3], 'PX', math.max(1, tonumber(ARGV[9])))
  redis.call('ZADD', p .. 'req:expiring', tonumber(ARGV[8]), ARGV[2] .. '|' .. ARGV[5] .. '|' .. ARGV[4] .. '|' .. ARGV[6])
else
  redis.call('SET', p .. 'req:' .. ARGV[2], ARGV[3])
end
redis.call('HSET', p .. 'req:seqs', ARGV[2], seq)
redis.call('ZADD', p .. 'req:pr:' .. ARGV[5], seq, ARGV[2])
redis.call('ZADD', p .. 'req:repo:' .. ARGV[4], seq, ARGV[2])
redis.call('ZADD', p .. 'req:user:' .. ARGV[6], tonumber(ARGV[7]), ARGV[2])
redis.call('SADD', p .. 'repos', ARGV[4])
return seq
`;

/**
 * An audit record: its id from a counter, the record appended to the stream, the stream
 * trimmed to about `maxlen` entries. KEYS: counter, stream, the stream's expiring entries.
 * ARGV: JSON without id, maxlen, expiry in ms ("" for none). Returns the id.
 */
export const AUDIT = `
local id = redis.call('INCR', KEYS[1])
local record = string.sub(ARGV[1], 1, -2) .. ',"id":' .. id .. '}'
local entry = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', 'r', record)
if ARGV[3] ~= '' then redis.call('ZADD', KEYS[3], tonumber(ARGV[3]), entry) end
return id
`;

/**
 * Deletes the requests and audit entries whose expiry has passed on the store's clock, with
 * their index entries (a record's PX may have removed the record itself already); at most 200
 * of each per call. ARGV: prefix, now ms. Returns how many went.
 */
export const SWEEP_EXPIRED = `
local p = ARGV[1]
local now = tonumber(ARGV[2])
local gone = redis.call('ZRANGEBYSCORE', p .. 'req:expiring', '-inf', now, 'LIMIT', 0, 200)
for _, m in ipairs(gone) do
  local id, prkey, repo, login = string.match(m, '^([^|]*)|([^|]*)|([^|]*)|(.*)$')
  redis.call('DEL', p .. 'req:' .. id)
  redis.call('HDEL', p .. 'req:seqs', id)
  redis.call('ZREM', p .. 'req:pr:' .. prkey, id)
  redis.call('ZREM', p .. 'req:repo:' .. repo, id)
  redis.call('ZREM', p .. 'req:user:' .. login, id)
  if redis.call('ZCARD', p .. 'req:repo:' .. repo) == 0 then redis.call('SREM', p .. 'repos', repo) end
  redis.call('ZREM', p .. 'req:expiring', m)
end
local entries = redis.call('ZRANGEBYSCORE', p .. 'audit:expiring', '-inf', now, 'LIMIT', 0, 200)
for _, entry in ipairs(entries) do
  redis.call('XDEL', p .. 'audit', entry)
  redis.call('ZREM', p .. 'audit:expiring', entry)
end
return #gone + #entries
`;

/**
 * A job (a hash) and, when a claim key is given, its claim, in one step. KEYS: claim key
 * (or a placeholder), counter. ARGV: prefix, id, key, kind, payload, claim ("" for none),
 * now, claim ttl ms. Returns 0 when the claim is held (nothing written), else the seq.
 */
export const ENQUEUE_JOB = `
local p = ARGV[1]
local now = tonumber(ARGV[7])
if ARGV[6] ~= '' then
  local ttl = tonumber(ARGV[8])
  local value = tostring(now + ttl) .. ' '
  if not redis.call('SET', KEYS[1], value, 'NX', 'PX', ttl) then
    local held = redis.call('GET', KEYS[1])
    local expires = held and tonumber(string.match(held, '^(%d+)')) or 0
    if expires > now then return 0 end
    redis.call('SET', KEYS[1], value, 'PX', ttl)
  end
end
local seq = redis.call('INCR', KEYS[2])
redis.call('HSET', p .. 'job:' .. ARGV[2], 'key', ARGV[3], 'kind', ARGV[4], 'payload', ARGV[5], 'claim', ARGV[6], 'attempts', 0, 'owner', '', 'until', '', 'created', now, 'seq', seq)
redis.call('ZADD', p .. 'jobkey:' .. ARGV[3], seq, ARGV[2])
redis.call('ZADD', p .. 'jobs', seq, ARGV[2])
return seq
`;

/**
 * Takes or renews a job's lease. ARGV: prefix, id, owner, now, lease ms. Returns
 * {"gone"}, {"busy", until}, {"delayed", until}, {"behind", first id} or {"ok"}.
 */
export const LEASE_JOB = `
local p = ARGV[1]
local k = p .. 'job:' .. ARGV[2]
local f = redis.call('HMGET', k, 'key', 'owner', 'until', 'attempts')
if not f[1] then return {'gone'} end
local now = tonumber(ARGV[4])
local untilMs = tonumber(f[3])
if untilMs and untilMs > now then
  if f[2] == '' then return {'delayed', f[3]} end
  if f[2] ~= ARGV[3] then return {'busy', f[3]} end
end
local first = redis.call('ZRANGE', p .. 'jobkey:' .. f[1], 0, 0)[1]
if first and first ~= ARGV[2] then return {'behind', first} end
local attempts = tonumber(f[4])
if f[2] ~= ARGV[3] then attempts = attempts + 1 end
redis.call('HSET', k, 'owner', ARGV[3], 'until', now + tonumber(ARGV[5]), 'attempts', attempts)
return {'ok'}
`;

/**
 * Renews the lease `owner` holds, and only then (the fence's compare of the owner, src/jobs/fence.ts).
 * ARGV: prefix, id, owner, now, lease ms. Returns 1 when renewed, 0 when another owner (or none) holds it.
 */
export const RENEW_JOB = `
local k = ARGV[1] .. 'job:' .. ARGV[2]
if redis.call('HGET', k, 'owner') ~= ARGV[3] then return 0 end
redis.call('HSET', k, 'until', tonumber(ARGV[4]) + tonumber(ARGV[5]))
return 1
`;

/**
 * Ends a job held by `owner`: deleted (completed, or given up with its claim released), or
 * kept for a retry after a delay. ARGV: prefix, id, owner, mode ("complete", "give-up",
 * "retry"), not-before ms (retry). Returns 0 when the owner no longer held it.
 */
export const END_JOB = `
local p = ARGV[1]
local k = p .. 'job:' .. ARGV[2]
local f = redis.call('HMGET', k, 'key', 'owner', 'claim')
if not f[1] or f[2] ~= ARGV[3] then return 0 end
if ARGV[4] == 'retry' then
  redis.call('HSET', k, 'owner', '', 'until', ARGV[5])
  return 1
end
redis.call('DEL', k)
redis.call('ZREM', p .. 'jobkey:' .. f[1], ARGV[2])
redis.call('ZREM', p .. 'jobs', ARGV[2])
if ARGV[4] == 'give-up' and f[3] ~= '' then redis.call('DEL', p .. 'claim:' .. f[3]) end
return 1
`;

/** Moves the shared GitHub pause later (never earlier). KEYS[1] pause key; ARGV: until ms, now ms. */
export const PAUSE_UNTIL = `
local untilMs = tonumber(ARGV[1])
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if untilMs > current and untilMs > tonumber(ARGV[2]) then redis.call('SET', KEYS[1], untilMs, 'PX', untilMs - tonumber(ARGV[2])) end
return 1
`;

/**
 * The GPU runs of the requests in an index (records.ts gpuRunsOf: an A/B request is two),
 * counted inside Redis: a quota or cap check otherwise fetched and decoded every active
 * request (hundreds, each a JSON record) on each `/hcp smoke`. KEYS[1] the index (a sorted
 * set of request ids); ARGV: prefix, lowest score ("-inf" or a time in ms), "1" to leave out
 * refused requests, an installation id ("" for any). Returns the count.
 */
export const COUNT_RUNS = `
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[2], '+inf')
local installation = tonumber(ARGV[4])
local n = 0
for _, id in ipairs(ids) do
  local text = redis.call('GET', ARGV[1] .. 'req:' .. id)
  if text then
    local r = cjson.decode(text)
    if not (ARGV[3] == '1' and r.status == 'refused') and (installation == nil or r.installationId == installation) then
      if r.compare == 'p2p' or r.compare == 'a2a' then n = n + 2 else n = n + 1 end
    end
  end
end
return n
`;
