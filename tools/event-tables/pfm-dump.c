/*
 * pfm-dump: prints the core events of one libpfm4 PMU as JSON lines, for gen-tables.py.
 * Build: cc pfm-dump.c -o pfm-dump -lpfm  (Debian: libpfm4-dev)
 * Run:   LIBPFM_FORCE_PMU=amd64_k8_revf ./pfm-dump amd64_k8_revf
 * One line per event and per unit mask, with the raw control-register value libpfm encodes for
 * "PMU::EVENT:UMASK" (PFM_OS_NONE) and the Linux perf_event attr (PFM_OS_PERF_EVENT).
 */
#include <perfmon/pfmlib.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdio.h>
#include <string.h>
#include <inttypes.h>

static void json_str(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\') putchar('\\');
		if ((unsigned char)*s >= 0x20) putchar(*s);
	}
	putchar('"');
}

/* Encodes "pmu::event[:umask]" both ways; prints the fields, or an "error" field. */
static void encode(const char *pmu, const char *ev, const char *um)
{
	char spec[512];
	uint64_t *codes = NULL;
	int count = 0;
	pfm_perf_encode_arg_t arg;
	struct perf_event_attr attr;

	snprintf(spec, sizeof spec, um ? "%s::%s:%s" : "%s::%s", pmu, ev, um);
	int r = pfm_get_event_encoding(spec, PFM_PLM0 | PFM_PLM3, NULL, NULL, &codes, &count);
	if (r != PFM_SUCCESS) {
		printf(",\"error\":");
		json_str(pfm_strerror(r));
		return;
	}
	printf(",\"codes\":[");
	for (int i = 0; i < count; i++) printf("%s%" PRIu64, i ? "," : "", codes[i]);
	printf("]");
	memset(&arg, 0, sizeof arg);
	memset(&attr, 0, sizeof attr);
	arg.attr = &attr;
	arg.size = sizeof arg;
	if (pfm_get_os_event_encoding(spec, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT, &arg) == PFM_SUCCESS)
		printf(",\"perf_type\":%u,\"perf_config\":%" PRIu64 ",\"perf_config1\":%" PRIu64,
		       attr.type, (uint64_t)attr.config, (uint64_t)attr.config1);
}

int main(int argc, char **argv)
{
	if (argc != 2 || pfm_initialize() != PFM_SUCCESS) {
		fprintf(stderr, "usage: LIBPFM_FORCE_PMU=NAME pfm-dump NAME\n");
		return 2;
	}
	const char *want = argv[1];
	for (int p = PFM_PMU_NONE; p < PFM_PMU_MAX; p++) {
		pfm_pmu_info_t pinfo;
		memset(&pinfo, 0, sizeof pinfo);
		pinfo.size = sizeof pinfo;
		if (pfm_get_pmu_info(p, &pinfo) != PFM_SUCCESS || strcmp(pinfo.name, want))
			continue;
		for (int i = pinfo.first_event; i != -1; i = pfm_get_event_next(i)) {
			pfm_event_info_t e;
			memset(&e, 0, sizeof e);
			e.size = sizeof e;
			if (pfm_get_event_info(i, PFM_OS_NONE, &e) != PFM_SUCCESS)
				continue;
			int umasks = 0;
			for (int a = 0; a < e.nattrs; a++) {
				pfm_event_attr_info_t ai;
				memset(&ai, 0, sizeof ai);
				ai.size = sizeof ai;
				if (pfm_get_event_attr_info(i, a, PFM_OS_NONE, &ai) != PFM_SUCCESS ||
				    ai.type != PFM_ATTR_UMASK)
					continue;
				umasks++;
				printf("{\"event\":");
				json_str(e.name);
				printf(",\"code\":%" PRIu64 ",\"umask\":", e.code);
				json_str(ai.name);
				printf(",\"ucode\":%" PRIu64 ",\"default\":%d,\"precise\":%d", ai.code,
				       ai.is_dfl, ai.is_precise);
				encode(want, e.name, ai.name);
				printf("}\n");
			}
			/* The event by its name alone: its default unit mask(s), or an error. */
			printf("{\"event\":");
			json_str(e.name);
			printf(",\"code\":%" PRIu64 ",\"umasks\":%d", e.code, umasks);
			encode(want, e.name, NULL);
			printf("}\n");
		}
		return 0;
	}
	fprintf(stderr, "pfm-dump: no PMU named %s (is LIBPFM_FORCE_PMU set to it?)\n", want);
	return 1;
}
