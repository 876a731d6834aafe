VERBATIM_CONTEXT:
  ADD:
    - because the deploy step needs it: nginx.conf =>
        server {
            listen 8080;
        }
