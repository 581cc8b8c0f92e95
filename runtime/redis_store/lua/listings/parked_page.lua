-- One page of parked invocations merged from many users' parked indexes, newest first.
-- KEYS: parked_indexes...
-- ARGV: top, last_id, count
--   top: '+inf' or the cursor's score; last_id: '' = from the start
-- Returns {total size of all KEYS, then (key number, member, score) of the newest `count` entries after the
-- cursor, newest first}. Equal scores order by member, descending, as ZREVRANGEBYSCORE returns them.
-- A k-way merge: each index gives its newest entry first and its next one only when that one is taken, so
-- the work is one read per index plus one per entry returned.
local top, last, count = ARGV[1], ARGV[2], tonumber(ARGV[3])
local top_score = tonumber(top)
local function newer(a, b)
  if a.score ~= b.score then return a.score > b.score end
  return a.member > b.member
end
local function read(k, offset)  -- the index's entry at `offset` or later that is after the cursor
  while true do
    local got = redis.call('ZREVRANGEBYSCORE', KEYS[k], top, '-inf', 'WITHSCORES', 'LIMIT', offset, 1)
    if #got == 0 then return nil end
    local score = tonumber(got[2])
    if last == '' or score < top_score or got[1] < last then
      return {score = score, member = got[1], k = k, text = got[2], offset = offset}
    end
    offset = offset + 1
  end
end
local heap = {}
local function push(entry)
  heap[#heap + 1] = entry
  local i = #heap
  while i > 1 and newer(heap[i], heap[math.floor(i / 2)]) do
    local parent = math.floor(i / 2)
    heap[i], heap[parent] = heap[parent], heap[i]
    i = parent
  end
end
local function pop()
  local newest = heap[1]
  heap[1] = heap[#heap]
  heap[#heap] = nil
  local i = 1
  while true do
    local left, right, pick = 2 * i, 2 * i + 1, i
    if left <= #heap and newer(heap[left], heap[pick]) then pick = left end
    if right <= #heap and newer(heap[right], heap[pick]) then pick = right end
    if pick == i then return newest end
    heap[i], heap[pick] = heap[pick], heap[i]
    i = pick
  end
end
local total = 0
for k = 1, #KEYS do
  total = total + redis.call('ZCARD', KEYS[k])
  local head = read(k, 0)
  if head then push(head) end
end
local reply = {total}
while #heap > 0 and #reply < 1 + 3 * count do
  local entry = pop()
  reply[#reply + 1] = entry.k
  reply[#reply + 1] = entry.member
  reply[#reply + 1] = entry.text
  local following = read(entry.k, entry.offset + 1)
  if following then push(following) end
end
return reply
