-- uses: session_read
-- Read what changed in a session since the copy the caller holds (lib/session_read.lua).
-- KEYS: meta, state, user_state, events, times, [app_state]
-- ARGV: held_version, held_count, held_last_sha
--   the version, the number of events and the SHA1 of the last event's JSON of the copy the caller holds
-- Returns false when the session does not exist; else {meta, state, user state, app state, first, events}.
return read_session_since({meta = KEYS[1], state = KEYS[2], user_state = KEYS[3], events = KEYS[4],
                           app_state = KEYS[6]}, ARGV[1], ARGV[2], ARGV[3])
