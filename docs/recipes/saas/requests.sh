BASE=${BASE:-http://localhost:3000}
json() { curl -s "$@" -H 'content-type: application/json'; }
login() { json -X POST "$BASE/api/v1/auth/login" -d "{\"email\":\"$1\",\"password\":\"$2\"}" | jq -r .token; }
ADMIN=$(login admin@example.com 'change me, please!')
user() {
  json -X POST "$BASE/api/v1/users" -H "authorization: Bearer $ADMIN" \
    -d "{\"email\":\"$1\",\"displayName\":\"$1\",\"password\":\"a long password 1!\"}" | jq -r .id
}
ADA=$(user ada@acme.test); BO=$(user bo@beta.test); CY=$(user cy@both.test)
ACME=$(json -X POST "$BASE/api/v1/organizations" -H "authorization: Bearer $ADMIN" \
  -d "{\"name\":\"Acme\",\"members\":[\"$ADA\",\"$CY\"]}" | jq -r .data.id)
BETA=$(json -X POST "$BASE/api/v1/organizations" -H "authorization: Bearer $ADMIN" \
  -d "{\"name\":\"Beta\",\"members\":[\"$BO\",\"$CY\"]}" | jq -r .data.id)
ADA_T=$(login ada@acme.test 'a long password 1!'); BO_T=$(login bo@beta.test 'a long password 1!')
CY_T=$(login cy@both.test 'a long password 1!')

# A member of one organization: its projects go there without being told.
ROCKET=$(json -X POST "$BASE/api/v1/projects" -H "authorization: Bearer $ADA_T" -d '{"name":"Rocket"}' | jq -r .data.id)
json -X POST "$BASE/api/v1/projects" -H "authorization: Bearer $BO_T" -d '{"name":"Boat"}' >/dev/null
# A member of two must say which.
json -X POST "$BASE/api/v1/projects" -H "authorization: Bearer $CY_T" -d '{"name":"Canoe"}' | jq -c '.error.code'
json -X POST "$BASE/api/v1/projects" -H "authorization: Bearer $CY_T" -H "x-tenant-id: $ACME" \
  -d '{"name":"Canoe"}' | jq -c '.data | {name, inAcme: (.tenantId == "'"$ACME"'")}'

curl -s "$BASE/api/v1/projects?sort=name" -H "authorization: Bearer $ADA_T" | jq -c '.data | {totalCount, names: [.items[].name]}'
curl -s "$BASE/api/v1/projects?sort=name" -H "authorization: Bearer $BO_T" | jq -c '.data | {totalCount, names: [.items[].name]}'
curl -s "$BASE/api/v1/projects?sort=name" -H "authorization: Bearer $CY_T" | jq -c '.data | {totalCount, names: [.items[].name]}'
curl -s -o /dev/null -w 'Bo reads Ada'"'"'s project: %{http_code}\n' "$BASE/api/v1/projects/$ROCKET" -H "authorization: Bearer $BO_T"
curl -s "$BASE/api/v1/organizations" -H "authorization: Bearer $CY_T" | jq -c '[.data.items[].name] | sort'
