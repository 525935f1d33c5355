# The gateway as an image: build in one stage, run the compiled output as a non-root user in the
# next. Data (the LMDB store, or in distributed mode its local replica) lives in the /data volume.
# test/dockerfile.test.ts runs these same steps outside Docker (no image registry in CI): keep the
# instructions to FROM, WORKDIR, COPY, RUN, ENV, USER, VOLUME, EXPOSE, HEALTHCHECK and CMD.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
COPY core ./core
COPY cli ./cli
COPY plugins ./plugins
COPY bench ./bench
COPY test ./test
COPY examples ./examples
COPY config ./config
COPY console ./console
# `npm ci` builds (the `prepare` script: TypeScript and the console); then only runtime packages stay.
RUN npm ci --no-audit --no-fund && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production GATEWAY_DATA_DIR=/data GATEWAY_HOST=0.0.0.0
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/config ./config
COPY --from=build /app/package.json ./
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8787
HEALTHCHECK --interval=10s --timeout=3s --retries=3 CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.GATEWAY_PORT||8787)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node is PID 1 here and handles SIGTERM itself: the gateway drains in-flight requests, then exits 0.
CMD ["node", "dist/cli/main.js", "start"]
