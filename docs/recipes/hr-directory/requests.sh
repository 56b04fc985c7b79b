BASE=${BASE:-http://localhost:3000}
json() { curl -s "$@" -H 'content-type: application/json'; }
login() { json -X POST "$BASE/api/v1/auth/login" -d "{\"email\":\"$1\",\"password\":\"$2\"}" | jq -r .token; }
ADMIN=$(login admin@example.com 'change me, please!')
for WHO in alice:USER bob:USER hana:HR; do
  json -X POST "$BASE/api/v1/users" -H "authorization: Bearer $ADMIN" \
    -d "{\"email\":\"${WHO%%:*}@example.com\",\"displayName\":\"${WHO%%:*}\",\"roles\":[\"${WHO##*:}\"],\"password\":\"a long password 1!\"}" >/dev/null
done
ALICE=$(login alice@example.com 'a long password 1!'); BOB=$(login bob@example.com 'a long password 1!')
HANA=$(login hana@example.com 'a long password 1!')

# Alice adds herself; she may not set her own salary (403 naming the field).
ME=$(json -X POST "$BASE/api/v1/employees" -H "authorization: Bearer $ALICE" -d '{"name":"Alice","team":"web"}' | jq -r .data.id)
json -X POST "$BASE/api/v1/employees" -H "authorization: Bearer $ALICE" -d '{"name":"Al","salary":1}' | jq -c '.error | {code, details}'
# HR sets the salary and a note.
json -X PATCH "$BASE/api/v1/employees/$ME" -H "authorization: Bearer $HANA" \
  -d '{"salary":5200,"performanceNotes":"Leads the redesign"}' | jq -c '.data | {salary, performanceNotes}'
# Another record with the same tax number: 409 naming the field, the value nowhere in the answer.
json -X PATCH "$BASE/api/v1/employees/$ME" -H "authorization: Bearer $HANA" -d '{"taxNumber":"TX-4471"}' >/dev/null
BOBS=$(json -X POST "$BASE/api/v1/employees" -H "authorization: Bearer $BOB" -d '{"name":"Bob"}' | jq -r .data.id)
json -X PATCH "$BASE/api/v1/employees/$BOBS" -H "authorization: Bearer $HANA" -d '{"taxNumber":"TX-4471"}' \
  | jq -c '{code: .error.code, details: .error.details, value: (tostring | contains("4471"))}'
# Each sees what they may: HR everything, Alice her salary, Bob neither (the keys are absent).
for WHO in HANA ALICE BOB; do
  curl -s "$BASE/api/v1/employees/$ME" -H "authorization: Bearer ${!WHO}" | jq -c '.data | del(.id, .ownerId, .createdAt, .updatedAt)'
done
# A batch is refused as a whole, naming the operation and the field.
json -X POST "$BASE/api/v1/batch" -H "authorization: Bearer $ALICE" \
  -d "{\"operations\":[{\"op\":\"update\",\"entity\":\"employees\",\"id\":\"$ME\",\"body\":{\"team\":\"app\",\"salary\":9999}}]}" \
  | jq -c '.error | {code, details}'
# So is a bulk create, naming the item.
json -X POST "$BASE/api/v1/employees/bulk" -H "authorization: Bearer $BOB" \
  -d '{"items":[{"name":"Bob","team":"ops"},{"name":"Bo","salary":1}]}' | jq -c '.error | {code, details}'
# The metadata tells each caller where they may see and set each field; the console follows it.
for WHO in HANA BOB; do
  curl -s "$BASE/api/v1/schema/metadata/employees" -H "authorization: Bearer ${!WHO}" \
    | jq -c '[.data.fields[] | select(.access) | {name, caller: .access.caller, filterable}]'
done
# Bob may not filter, sort or measure by what he may not see: the same 400 as for an unknown field.
curl -s "$BASE/api/v1/employees?salary%5Bgte%5D=5000" -H "authorization: Bearer $BOB" | jq -c .error.details
curl -s "$BASE/api/v1/employees?sort=-salary" -H "authorization: Bearer $BOB" | jq -c .error.details
curl -s "$BASE/api/v1/employees/aggregate?groupBy=team&sum=salary" -H "authorization: Bearer $BOB" | jq -c .error.details
curl -s "$BASE/api/v1/employees?salary%5Bgte%5D=5000" -H "authorization: Bearer $HANA" | jq -c '.data.totalCount'
# Nor read it in the record's history.
curl -s "$BASE/api/v1/employees/$ME/versions" -H "authorization: Bearer $BOB" | jq -c '[.items[] | {changeType, changedFields, snapshot: (.snapshot | has("salary"))}]'
for WHO in HANA BOB; do
  curl -s "$BASE/api/v1/employees/$ME/versions/compare?a=1&b=2" -H "authorization: Bearer ${!WHO}" \
    | jq -c '[.changes[] | select(.changed) | .field]'
done
# Alice may edit her record, not her salary: her revert brings back what she may set, and keeps the rest.
json -X PATCH "$BASE/api/v1/employees/$ME" -H "authorization: Bearer $ALICE" -d '{"team":"apps"}' >/dev/null
json -X POST "$BASE/api/v1/employees/$ME/revert/1" -H "authorization: Bearer $ALICE" | jq -c '.entity | {team, salary}'
for WHO in ALICE BOB; do
  curl -s "$BASE/api/v1/employees/$ME/field-changes" -H "authorization: Bearer ${!WHO}" | jq -c '[.items[] | {fieldName, newValue}]'
done
# A role made through the API gets a field by its permission.
json -X POST "$BASE/api/v1/roles" -H "authorization: Bearer $ADMIN" \
  -d '{"key":"PAYROLL","label":"Payroll","permissions":["employees:view","employees.salary:view"]}' | jq -c .permissions
json -X PUT "$BASE/api/v1/users/$(curl -s "$BASE/api/v1/auth/me" -H "authorization: Bearer $BOB" | jq -r .user.id)" \
  -H "authorization: Bearer $ADMIN" -d '{"roles":["PAYROLL"]}' >/dev/null
BOB=$(login bob@example.com 'a long password 1!')
curl -s "$BASE/api/v1/employees/$ME" -H "authorization: Bearer $BOB" | jq -c '.data | {salary, notes: has("performanceNotes")}'
