/*
 * The in-memory map of src/hashtable (struct ht_map): keys found with
 * their values across growth, and a map reset for a small input after a
 * big one uses a table of the small one's size within the slots it kept,
 * and one for a larger input the room its huge page gave.
 */
#include <check.h>
#include <stdlib.h>

#include "check_run.h"
#include "hashtable/ht.h"

/* Key i of a set: spread out, never 0, distinct for distinct i. */
static uint64_t key_of(uint32_t i, uint64_t salt)
{
	return ((uint64_t)i + 1) * 0x9e3779b97f4a7c15ULL ^ salt;
}

static void fill(struct ht_map *m, uint32_t n, uint64_t salt)
{
	for (uint32_t i = 0; i < n; i++) {
		bool added;
		uint32_t *v = ht_map_find_or_add(m, key_of(i, salt), &added);

		ck_assert_ptr_nonnull(v);
		ck_assert(added);
		*v = i + 1;
	}
	ck_assert_uint_eq(m->count, n);
}

/* Every key of the set is there with its value; none of another set. */
static void check_all(const struct ht_map *m, uint32_t n, uint64_t salt)
{
	uint32_t v;

	for (uint32_t i = 0; i < n; i++) {
		ck_assert(ht_map_get(m, key_of(i, salt), &v));
		ck_assert_uint_eq(v, i + 1);
	}
	for (uint32_t i = 0; i < 1000; i++)
		ck_assert(!ht_map_get(m, key_of(i, salt ^ 0x5555), &v));
}

START_TEST(keys_survive_growth)
{
	struct ht_map m = HT_MAP_INIT;
	bool added;

	fill(&m, 100000, 1);
	check_all(&m, 100000, 1);
	/* Load at most 1/2. */
	ck_assert_uint_ge((uint64_t)m.mask + 1, 2 * 100000);
	ck_assert_uint_eq(*ht_map_find_or_add(&m, key_of(7, 1), &added), 8);
	ck_assert(!added);
	ht_map_release(&m);
	ck_assert_ptr_null(m.slots);
}
END_TEST

START_TEST(reset_uses_what_the_input_needs)
{
	struct ht_map m = HT_MAP_INIT;
	struct ht_map_slot *kept;
	uint32_t v;

	ck_assert_int_eq(ht_map_reset(&m, 50000), MP_OK);
	kept = m.slots;
	ck_assert_uint_ge(m.room, 100001);
	fill(&m, 50000, 2);
	check_all(&m, 50000, 2);

	/* A small one after it: the same slots, a table of its size, empty. */
	ck_assert_int_eq(ht_map_reset(&m, 100), MP_OK);
	ck_assert_ptr_eq(m.slots, kept);
	ck_assert_uint_eq((uint64_t)m.mask + 1, 256);
	ck_assert_uint_ge(m.room, 100001);
	ck_assert_uint_eq(m.count, 0);
	for (uint32_t i = 0; i < 50000; i += 97)
		ck_assert(!ht_map_get(&m, key_of(i, 2), &v));
	fill(&m, 100, 3);
	check_all(&m, 100, 3);

	/* More keys than that table holds: it grows, nothing lost. */
	for (uint32_t i = 100; i < 5000; i++)
		ck_assert_int_eq(ht_map_put(&m, key_of(i, 3), i + 1), MP_OK);
	check_all(&m, 5000, 3);
	ck_assert_uint_eq(m.room, (uint64_t)m.mask + 1);

	/* A big one again: room made anew, every old key gone. */
	ck_assert_int_eq(ht_map_reset(&m, 40000), MP_OK);
	ck_assert_uint_eq(m.count, 0);
	ck_assert(!ht_map_get(&m, key_of(5, 3), &v));
	fill(&m, 40000, 4);
	check_all(&m, 40000, 4);
	ht_map_release(&m);
}
END_TEST

/*
 * A table of 1 MiB comes as a whole 2 MiB huge page: a later input of
 * twice the size fills that room, with no fresh memory (first touches
 * are what costs on a virtual machine).
 */
START_TEST(reset_grows_into_the_huge_page_it_has)
{
	struct ht_map m = HT_MAP_INIT;
	struct ht_map_slot *kept;

	ck_assert_int_eq(ht_map_reset(&m, 20000), MP_OK);
	ck_assert_uint_eq((uint64_t)m.mask + 1, 65536);
	ck_assert_uint_ge(m.room, 131072);
	kept = m.slots;
	fill(&m, 20000, 5);

	ck_assert_int_eq(ht_map_reset(&m, 50000), MP_OK);
	ck_assert_ptr_eq(m.slots, kept);
	ck_assert_uint_eq((uint64_t)m.mask + 1, 131072);
	ck_assert_uint_eq(m.count, 0);
	fill(&m, 50000, 6);
	check_all(&m, 50000, 6);
	ht_map_release(&m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ht");
	TCase *tc = tcase_create("map");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, keys_survive_growth);
	tcase_add_test(tc, reset_uses_what_the_input_needs);
	tcase_add_test(tc, reset_grows_into_the_huge_page_it_has);
	suite_add_tcase(s, tc);
	return check_failures(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
