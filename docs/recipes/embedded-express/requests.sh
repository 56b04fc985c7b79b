BASE=${BASE:-http://localhost:3000}
curl -s "$BASE/hello" | jq -c .
TOKEN=$(curl -s -X POST "$BASE/api/v1/auth/login" -H 'content-type: application/json' \
  -d '{"email":"admin@example.com","password":"change me, please!"}' | jq -r .token)
curl -s -X POST "$BASE/api/v1/tasks" -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -d '{"title":"Embed entigen"}' | jq -c '.data | {title, done}'
curl -s "$BASE/api/v1/tasks?done=false" -H "authorization: Bearer $TOKEN" | jq -c '.data | {totalCount, titles: [.items[].title]}'
curl -s "$BASE/api/v1/tasks" | jq -c .error.code
curl -s "$BASE/somewhere-else" | jq -c .
