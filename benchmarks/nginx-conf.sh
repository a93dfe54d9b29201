# Sourced by the nginx benchmarks: nginx_conf DIR PORT writes DIR/nginx.conf, a one-process
# server of DIR/www on 127.0.0.1:PORT with everything it writes kept in DIR.
nginx_conf() {
  local dir=$1 port=$2
  mkdir -p "$dir/www"
  cat >"$dir/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 256; }
http {
  access_log off;
  sendfile on;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  server { listen 127.0.0.1:$port; root $dir/www; }
}
CONF
}
