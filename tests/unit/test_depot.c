typedef int placeholder_depot;
