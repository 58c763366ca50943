-- wrk script: send the JSON body in the WRK_BODY environment variable as a POST.
wrk.method = "POST"
wrk.body = os.getenv("WRK_BODY")
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
