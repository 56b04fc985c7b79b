BASE=${BASE:-http://localhost:3000}
json() { curl -s "$@" -H 'content-type: application/json'; }
login() { json -X POST "$BASE/api/v1/auth/login" -d "{\"email\":\"$1\",\"password\":\"$2\"}" | jq -r .token; }
ADMIN=$(login admin@example.com 'change me, please!')
for WHO in writer:USER editor:EDITOR; do
  json -X POST "$BASE/api/v1/users" -H "authorization: Bearer $ADMIN" \
    -d "{\"email\":\"${WHO%%:*}@example.com\",\"displayName\":\"${WHO%%:*}\",\"roles\":[\"${WHO##*:}\"],\"password\":\"a long password 1!\"}" >/dev/null
done
WRITER=$(login writer@example.com 'a long password 1!'); EDITOR=$(login editor@example.com 'a long password 1!')

# The writer drafts; the public sees nothing yet.
POST=$(json -X POST "$BASE/api/v1/posts" -H "authorization: Bearer $WRITER" \
  -d '{"title":"Spring issue","body":"First draft"}' | jq -r .data.id)
json -X PATCH "$BASE/api/v1/posts/$POST" -H "authorization: Bearer $WRITER" -d '{"body":"Second draft"}' >/dev/null
curl -s "$BASE/api/v1/posts" | jq -c '{public: .data.totalCount}'
# The writer may neither publish nor approve.
json -X PATCH "$BASE/api/v1/posts/$POST" -H "authorization: Bearer $WRITER" -d '{"status":"published"}' | jq -c .error.details
json -X POST "$BASE/api/v1/posts/$POST/approve" -H "authorization: Bearer $WRITER" -d '{"publishAt":"2020-01-01T00:00:00Z"}' | jq -c .error.code
# The editor sees the body's changes, and schedules the post (here: at a time already past).
curl -s "$BASE/api/v1/posts/$POST/field-changes" -H "authorization: Bearer $EDITOR" | jq -c '[.items[] | {fieldName, oldValue, newValue}]'
json -X POST "$BASE/api/v1/posts/$POST/approve" -H "authorization: Bearer $EDITOR" -d '{"publishAt":"2020-01-01T00:00:00Z"}' \
  | jq -c '.data | {status, scheduled: (.publishAt != null)}'
# The publishing job runs every minute; run it now, and wait for it.
JOB=$(curl -s "$BASE/api/v1/scheduledJobs?name=publish" -H "authorization: Bearer $ADMIN" | jq -r '.data.items[0].id')
RUN=$(json -X POST "$BASE/api/v1/scheduledJobs/$JOB/run" -H "authorization: Bearer $ADMIN" | jq -r .data.id)
for _ in $(seq 50); do
  STATUS=$(curl -s "$BASE/api/v1/jobExecutions/$RUN" -H "authorization: Bearer $ADMIN" | jq -r .data.status)
  [ "$STATUS" = running ] || break; sleep 0.2
done
curl -s "$BASE/api/v1/jobExecutions/$RUN" -H "authorization: Bearer $ADMIN" | jq -c '.data | {status, output}'
curl -s "$BASE/api/v1/posts" | jq -c '.data | {public: .totalCount, titles: [.items[].title]}'
curl -s "$BASE/api/v1/posts/$POST/versions" -H "authorization: Bearer $EDITOR" | jq -c '[.items[].changeType]'
