-- wrk through an HTTP proxy: absolute-form requests for BENCH_URL (a comma-separated list is
-- requested in turn, e.g. an asset mix), an optional binding header and Referer, and a JSON line with
-- throughput and latency percentiles at the end.
local urls = {}
for item in string.gmatch(os.getenv("BENCH_URL"), "([^,]+)") do
  table.insert(urls, item)
end
local counter = 0
local header = os.getenv("BENCH_HEADER") or ""
local dest = os.getenv("BENCH_DEST") or "document"
-- The page the subresources belong to: the proxy checks an asset against that page's
-- knowledge only when it knows the page.
local referer = os.getenv("BENCH_REFERER") or ""

request = function()
  local headers = { ["Sec-Fetch-Dest"] = dest, ["Accept-Encoding"] = "gzip" }
  if header ~= "" then
    local name, value = header:match("([^:]+):%s*(.*)")
    headers[name] = value
  end
  if referer ~= "" then
    headers["Referer"] = referer
  end
  counter = counter + 1
  return wrk.format("GET", urls[(counter % #urls) + 1], headers)
end

done = function(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.timeout
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"errors":%d,"non2xx":%d,"p50_us":%d,"p95_us":%d}\n',
    summary.requests, summary.duration, errors, summary.errors.status,
    latency:percentile(50), latency:percentile(95)))
end
