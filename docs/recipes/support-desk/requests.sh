BASE=${BASE:-http://localhost:3000}
ADMIN=$(curl -s -X POST "$BASE/api/v1/auth/login" -H 'content-type: application/json' \
  -d '{"email":"admin@example.com","password":"change me, please!"}' | jq -r .token)
AGENT_ID=$(curl -s -X POST "$BASE/api/v1/users" -H "authorization: Bearer $ADMIN" -H 'content-type: application/json' \
  -d '{"email":"ada@example.com","displayName":"Ada","roles":["AGENT"],"password":"agent password 1!"}' | jq -r .id)
MINE=$(curl -s -X POST "$BASE/api/v1/tickets" -H "authorization: Bearer $ADMIN" -H 'content-type: application/json' \
  -d "{\"subject\":\"Printer on fire\",\"priority\":\"high\",\"assignee\":\"$AGENT_ID\"}" | jq -r .data.id)
OTHER=$(curl -s -X POST "$BASE/api/v1/tickets" -H "authorization: Bearer $ADMIN" -H 'content-type: application/json' \
  -d '{"subject":"Lost password"}' | jq -r .data.id)
for T in "$MINE" "$OTHER"; do
  curl -s -o /dev/null -X POST "$BASE/api/v1/comments" -H "authorization: Bearer $ADMIN" -H 'content-type: application/json' \
    -d "{\"ticket\":\"$T\",\"body\":\"Customer called about $T\"}"
done
AGENT=$(curl -s -X POST "$BASE/api/v1/auth/login" -H 'content-type: application/json' \
  -d '{"email":"ada@example.com","password":"agent password 1!"}' | jq -r .token)

curl -s "$BASE/api/v1/tickets?select=subject" -H "authorization: Bearer $AGENT" | jq -c '.data | {totalCount, subjects: [.items[].subject]}'
curl -s "$BASE/api/v1/comments" -H "authorization: Bearer $AGENT" | jq -c "{totalCount: .data.totalCount, mine: ([.data.items[].ticket] == [\"$MINE\"])}"
curl -s -o /dev/null -w 'ticket of another agent: %{http_code}\n' "$BASE/api/v1/tickets/$OTHER" -H "authorization: Bearer $AGENT"
curl -s -X POST "$BASE/api/v1/tickets" -H "authorization: Bearer $ADMIN" -H 'content-type: application/json' \
  -d '{"subject":"Sneaky","slaDueAt":"2000-01-01T00:00:00Z"}' | jq -c .error.details
curl -s "$BASE/api/v1/tickets/$MINE" -H "authorization: Bearer $AGENT" | jq -c '{sla: (.data.slaDueAt != null)}'
curl -s "$BASE/api/v1/scheduledJobs?name=nightlyClose" -H "authorization: Bearer $ADMIN" | jq -c '.data.items[0] | {handler, origin}'
